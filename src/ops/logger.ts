// The process logger: pino JSON lines. What it must never carry: conversation text or preview, request
// bodies, query strings, API keys. Request lines are written by the app (see app.ts) from the route
// pattern and status only; the serializers below make anything else that reaches the logger safe too.
import { pino, type DestinationStream, type Logger } from 'pino';
import { describeBug } from './describe-bug.ts';

export type { Logger };

export interface LoggerOptions {
  level: string;
  /** Where lines go; stdout when absent. Tests pass a capturing stream. */
  destination?: DestinationStream;
  /**
   * Write each line to stdout before the call returns (AUDIT_LOG=true): an audit line is then in the
   * kernel's pipe before the result it audits is stored, and a crash of the process cannot lose it.
   * Off, lines are buffered and written a moment later (faster; a crash loses the last few).
   */
  sync?: boolean;
}

interface RequestLike {
  method?: string;
  url?: string;
  routeOptions?: { url?: string };
}

const pathOnly = (url: string | undefined) => (url ?? '').split('?')[0];

export const logSerializers = {
  // A request is named by its route pattern when it has one, else by its path without the query.
  req: (req: RequestLike) => ({ method: req.method, route: req.routeOptions?.url ?? pathOnly(req.url) }),
  res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
  // An error message can quote its input; only the type and stack frames are logged.
  err: describeBug,
};

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      serializers: logSerializers,
      redact: {
        paths: [
          'authorization',
          'cookie',
          'headers.authorization',
          'headers.cookie',
          'req.headers.authorization',
          'req.headers.cookie',
          'request.headers.authorization',
          'request.headers.cookie',
        ],
        censor: '[redacted]',
      },
    },
    // One stream for every line, sync or not: two writers on one pipe could interleave inside a line.
    options.destination ?? pino.destination({ fd: 1, sync: options.sync ?? false }),
  );
}
