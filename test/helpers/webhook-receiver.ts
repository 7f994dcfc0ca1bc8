// A real webhook receiver for tests: a node:http server on 127.0.0.1 port 0 that records every
// request's raw body and headers and answers from a script (status, headers, delay) per request.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Wait this long before answering (timeouts). */
  delayMs?: number;
}

export interface Receiver {
  /** `127.0.0.1:<port>`, as WEBHOOK_ALLOWED_HOSTS names it. */
  hostPort: string;
  /** `http(s)://127.0.0.1:<port><path>`. */
  url(path?: string): string;
  requests: ReceivedRequest[];
  /** Answers for the next requests, in order; once used up every request gets 200. */
  script(...answers: Answer[]): void;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** Plain HTTP, or HTTPS with `tls` (a real TLS socket: the client must trust the certificate). */
export async function startReceiver(options: { tls?: { key: string; cert: string } } = {}): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let answers: Answer[] = [];
  const waiters: Array<() => void> = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      for (const w of waiters.splice(0)) w();
      const answer = answers.shift() ?? { status: 200 };
      const reply = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, answer.headers ?? {});
        res.end('receiver says hello');
      };
      if (answer.delayMs === undefined) reply();
      else setTimeout(reply, answer.delayMs);
    });
  };
  const server: Server = options.tls === undefined ? createServer(handler) : createTlsServer(options.tls, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const hostPort = `127.0.0.1:${port}`;
  return {
    hostPort,
    url: (path = '/hook') => `${options.tls === undefined ? 'http' : 'https'}://${hostPort}${path}`,
    requests,
    script(...next: Answer[]) {
      answers = next;
    },
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`receiver got ${requests.length} request(s), expected ${count}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
      return requests.slice(0, count);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Verifies a request exactly as the Standard Webhooks spec tells a receiver to, written here from the
 * spec and independent of src/webhooks: key = base64-decode(secret without `whsec_`), expected =
 * base64(HMAC-SHA256(key, `${webhook-id}.${webhook-timestamp}.${raw body}`)), and the header is a
 * space-separated list of `v1,<signature>` entries, any of which may match.
 */
export function verifyStandardWebhook(secret: string, req: ReceivedRequest, toleranceS = 300): boolean {
  const id = req.headers['webhook-id'];
  const ts = req.headers['webhook-timestamp'];
  const sig = req.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof ts !== 'string' || typeof sig !== 'string') return false;
  if (!/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > toleranceS) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${req.body}`).digest();
  return sig.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
