// Graceful shutdown: on SIGTERM/SIGINT stop accepting, let in-flight requests finish within the grace
// period, close the scorer's workers, exit 0. Past the grace period, or on a second signal,
// close-with-grace exits 1. Signals during start-up: stop-signals.ts and serve.ts.
import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';

export interface ShutdownOptions {
  logger: Logger;
  graceMs: number;
  /** Run in order; each is awaited before the next. */
  steps: Array<{ name: string; run: () => Promise<void> }>;
}

export function installGracefulShutdown({ logger, graceMs, steps }: ShutdownOptions): { close: () => void } {
  const handle = closeWithGrace(
    {
      delay: graceMs,
      logger: false,
      onTimeout: (ms: number) => logger.error({ grace_ms: ms }, 'shutdown grace period exceeded; exiting'),
      // close-with-grace then exits 1 at once, cutting what is in flight: the log says so.
      onSecondSignal: (signal: NodeJS.Signals) => {
        logger.warn({ signal }, 'second stop signal: exiting now, requests in flight are cut off');
        logger.flush();
      },
    },
    async ({ signal, err }) => {
      if (err !== undefined) logger.fatal({ err }, 'fatal error; shutting down');
      logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
      for (const step of steps) {
        await step.run();
        logger.info({ step: step.name }, 'closed');
      }
      logger.info('shutdown complete');
      logger.flush();
    },
  );
  return { close: () => void handle.close() };
}
