// Connections to the shared Redis (REDIS_URL; rediss:// for TLS), one per kind of use, because they
// must fail differently: a request path must fail fast while Redis is down (the rate limiter skips,
// a job submission answers 503), while BullMQ's blocking workers wait and reconnect on their own.
import { Redis, type RedisOptions } from 'ioredis';

export interface SharedRedis {
  /** The job store's commands: no offline queue, one retry, a 5 s answer limit, so an outage is an error. */
  readonly command: Redis;
  /** The rate limiter's commands and readiness's PING, with a 1 s answer limit: every request waits on them. */
  readonly limiter: Redis;
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
  /** True while the store's and limiter's connections are up and Redis answered its last PING in time. */
  ready(): boolean;
  /** Resolves once the store's and limiter's connections are up, or after `timeoutMs` (an unreachable Redis must not stop the start). */
  whenReady(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface SharedRedisOptions {
  url: string;
  prefix: string;
  /**
   * Told the first outcome (reachable, or the first failure of a Redis unreachable from the start) and
   * then each change, once each, without the URL (it may hold a password).
   */
  onStatus?: (up: boolean, error?: string) => void;
}

/**
 * How long the rate limiter's commands and readiness's PING may wait for an answer: a Redis that
 * hangs (stopped, or a network that drops packets) keeps its socket open, and without a limit every
 * request would wait with it.
 */
export const LIMITER_TIMEOUT_MS = 1000;
/**
 * The job store's limit. Longer, because a store write that Redis carried out but answered late
 * reads as failed (its submission answers 503, and the job limits it holds wait for its lease to
 * lapse): only a Redis that is as good as hung takes this long over one small script.
 */
export const STORE_TIMEOUT_MS = 5000;
/** How often readiness asks Redis for a PING: a hung server answers nothing and reads as down. */
const PING_INTERVAL_MS = 1000;

export function connectRedis(options: SharedRedisOptions): SharedRedis {
  const common: RedisOptions = {
    connectTimeout: 5000,
    // Capped exponential reconnect: an outage never becomes a tight loop.
    retryStrategy: (times) => Math.min(50 * 2 ** times, 2000),
  };
  // Request-path connections: no offline queue and one retry, so an outage is an error at once.
  const failFast: RedisOptions = { ...common, maxRetriesPerRequest: 1, enableOfflineQueue: false };
  const command = new Redis(options.url, { ...failFast, commandTimeout: STORE_TIMEOUT_MS });
  const limiter = new Redis(options.url, { ...failFast, commandTimeout: LIMITER_TIMEOUT_MS });
  const queue = new Redis(options.url, failFast);
  queue.on('error', () => {});
  const extra: Redis[] = [limiter, queue];
  // Up: the store's and the limiter's connections are open and the last PING was answered in time.
  let answering = true;
  const healthy = (): boolean => command.status === 'ready' && limiter.status === 'ready' && answering;
  // Undefined until the first outcome, so that a Redis unreachable from the start is reported too.
  let reported: boolean | undefined;
  // Told on the first outcome and on each change only; ioredis reports every failed attempt. Messages carry no URL.
  const report = (error?: string): void => {
    const now = healthy();
    // One connection up while the other still connects is no outcome yet.
    if (reported === undefined && !now && error === undefined) return;
    if (now === reported) return;
    reported = now;
    options.onStatus?.(now, now ? undefined : error);
  };
  let closed = false;
  const ping = setInterval(() => {
    if (limiter.status !== 'ready') return;
    limiter.ping().then(
      () => {
        answering = true;
        if (!closed) report();
      },
      (err: unknown) => {
        answering = false;
        if (!closed) report(err instanceof Error ? err.message : String(err));
      },
    );
  }, PING_INTERVAL_MS);
  ping.unref();
  for (const c of [command, limiter]) {
    c.on('ready', () => report());
    c.on('error', (err: Error) => report(err.message));
    c.on('end', () => report('connection closed'));
  }
  return {
    command,
    limiter,
    queue,
    prefix: options.prefix,
    blocking() {
      const c = new Redis(options.url, { ...common, maxRetriesPerRequest: null });
      c.on('error', () => {});
      extra.push(c);
      return c;
    },
    ready: healthy,
    whenReady(timeoutMs) {
      // Both request-path connections: the rate limit is not enforced until the limiter's is up.
      const connected = (): boolean => command.status === 'ready' && limiter.status === 'ready';
      if (connected()) return Promise.resolve(true);
      return new Promise((resolve) => {
        const settle = (value: boolean): void => {
          clearTimeout(timer);
          for (const c of [command, limiter]) c.off('ready', onReady);
          resolve(value);
        };
        const onReady = (): void => {
          if (connected()) settle(true);
        };
        const timer = setTimeout(() => settle(false), timeoutMs);
        for (const c of [command, limiter]) c.on('ready', onReady);
      });
    },
    async close() {
      closed = true;
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

/**
 * `work`'s answer, or a rejection once `ms` pass without one. For what a scrape waits on: BullMQ waits
 * for its connection without limit, and a /metrics that hangs while Redis is down blinds monitoring
 * just when it is needed.
 */
export async function answerWithin<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
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
