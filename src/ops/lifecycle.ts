// Graceful shutdown: on SIGTERM/SIGINT stop accepting, let in-flight requests finish within the grace
// period, close the scorer's workers, exit 0. Past the grace period close-with-grace exits 1.
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

/**
 * Until the graceful shutdown is installed: a stop signal during start-up (keys, TLS, the model's
 * load, binding) ends the process at once, exit 0, nothing being in flight yet. Node as PID 1 (the
 * image runs no init) ignores a signal it has no handler for, so without this a stop during start-up
 * waits out the whole grace period and ends in SIGKILL. Returns what removes the handler.
 */
export function exitOnSignalDuringStartup(logger: Logger): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'stopped during start-up');
    logger.flush();
    process.exit(0);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}
