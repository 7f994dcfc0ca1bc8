// Connections to the shared Redis (REDIS_URL; rediss:// for TLS), one per kind of use, because they
// must fail differently: a request path must fail fast while Redis is down (the rate limiter skips,
// a job submission answers 503), while BullMQ's blocking workers wait and reconnect on their own.
import { Redis, type RedisOptions } from 'ioredis';

export interface SharedRedis {
  /** Commands on the request path: no offline queue, one retry, a 1 s answer limit, so an outage is an error at once. */
  readonly command: Redis;
  /**
   * BullMQ queues' writes, as `command` but with no answer limit: a 50 MB job's items take longer
   * than 1 s to send, and a write that timed out after Redis took it would queue the job twice once
   * the client resubmits. A hung Redis is caught before, by the job store's own commands on `command`.
   */
  readonly queue: Redis;
  /** A new connection for BullMQ (workers block; it retries forever and reconnects). */
  blocking(): Redis;
  /** The key prefix every key of this appliance starts with. */
  readonly prefix: string;
  /** True while the command connection is up and Redis answered its last PING in time. */
  ready(): boolean;
  /** Resolves once connected, or after `timeoutMs` (an unreachable Redis must not stop the start). */
  whenReady(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface SharedRedisOptions {
  url: string;
  prefix: string;
  /** Told once per outage and once per recovery, without the URL (it may hold a password). */
  onStatus?: (up: boolean, error?: string) => void;
}

/**
 * A request-path command that gets no answer in this time fails: a Redis that hangs (stopped, or a
 * network that drops packets) keeps its socket open, and without a limit every request would wait.
 */
export const COMMAND_TIMEOUT_MS = 1000;
/** How often readiness asks Redis for a PING: a hung server answers nothing and reads as down. */
const PING_INTERVAL_MS = 1000;

export function connectRedis(options: SharedRedisOptions): SharedRedis {
  const common: RedisOptions = {
    connectTimeout: 5000,
    // Capped exponential reconnect: an outage never becomes a tight loop.
    retryStrategy: (times) => Math.min(50 * 2 ** times, 2000),
  };
  const command = new Redis(options.url, {
    ...common,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: COMMAND_TIMEOUT_MS,
  });
  const queue = new Redis(options.url, { ...common, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  queue.on('error', () => {});
  const extra: Redis[] = [queue];
  let up = false;
  // The socket being open is not enough: the last PING must have been answered in time.
  let answering = true;
  const ping = setInterval(() => {
    if (command.status !== 'ready') return;
    command.ping().then(
      () => {
        if (!answering && up) options.onStatus?.(true);
        answering = true;
      },
      (err: unknown) => {
        if (answering && up) options.onStatus?.(false, err instanceof Error ? err.message : String(err));
        answering = false;
      },
    );
  }, PING_INTERVAL_MS);
  ping.unref();
  command.on('ready', () => {
    if (!up) options.onStatus?.(true);
    up = true;
  });
  // ioredis reports every failed attempt; say it once per outage. The message carries no URL.
  command.on('error', (err: Error) => {
    if (up) options.onStatus?.(false, err.message);
    up = false;
  });
  command.on('end', () => {
    up = false;
  });
  return {
    command,
    queue,
    prefix: options.prefix,
    blocking() {
      const c = new Redis(options.url, { ...common, maxRetriesPerRequest: null });
      c.on('error', () => {});
      extra.push(c);
      return c;
    },
    ready: () => command.status === 'ready' && answering,
    whenReady(timeoutMs) {
      if (command.status === 'ready') return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          command.off('ready', onReady);
          resolve(false);
        }, timeoutMs);
        const onReady = (): void => {
          clearTimeout(timer);
          resolve(true);
        };
        command.once('ready', onReady);
      });
    },
    async close() {
      clearInterval(ping);
      // QUIT waits for a reply, which never comes while Redis is unreachable: give it a second.
      await Promise.all(
        [command, ...extra].map(async (c) => {
          await untilAborted(c.quit(), AbortSignal.timeout(1000)).catch(() => undefined);
          c.disconnect();
        }),
      );
    },
  };
}

/** Waits for `work`, or until `signal` aborts, whichever comes first (closing during an outage can hang). */
export async function untilAborted(work: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  await new Promise<void>((resolve, reject) => {
    const onAbort = (): void => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
