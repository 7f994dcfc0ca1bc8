// Jobs shared by every replica through Redis: the Redis store, the BullMQ scheduler and notifier,
// put together. A module of its own so a process without REDIS_URL never loads BullMQ or ioredis
// (about 20 MB of resident memory).
import { STORE_TIMEOUT_MS, type SharedRedis } from '../../ops/redis.ts';
import { JobService, type JobsDeps } from '../jobs.ts';
import { QueueNotifier } from './notifier.ts';
import { QueueScheduler } from './scheduler.ts';
import { RedisJobStore } from './store.ts';
import type { Sealer } from './sealing.ts';
import type { Jobs } from '../types.ts';

/** What createSharedJobs needs: the Redis connections, the sealer (queued items, webhook URLs) and the lock time. */
export interface SharedJobsOptions {
  redis: SharedRedis;
  sealer: Sealer;
  /**
   * JOB_LOCK_MS: how long a silent replica keeps its items before another takes them, and (at least
   * MIN_LEASE_MS) how long a submission it never finished holds its share of the job limits.
   */
  lockMs: number;
}

/**
 * The shortest lease a submission gets, whatever JOB_LOCK_MS says: a healthy submission makes a few
 * store calls, and one that a slow Redis answers late must not lapse and drop a job that was queued.
 */
const MIN_LEASE_MS = 3 * STORE_TIMEOUT_MS;

/** Jobs shared by every replica through Redis: any replica admits, runs, reports and answers for any job. */
export function createSharedJobs(deps: JobsDeps, shared: SharedJobsOptions): Jobs {
  const store = new RedisJobStore(shared.redis.command, shared.redis.prefix, {
    leaseMs: Math.max(shared.lockMs, MIN_LEASE_MS),
    sealer: shared.sealer,
  });
  const scheduler = new QueueScheduler({
    redis: shared.redis,
    sealer: shared.sealer,
    concurrency: deps.concurrency ?? 2,
    lockMs: shared.lockMs,
    registry: deps.registry,
  });
  const notifier = new QueueNotifier(shared.redis, shared.lockMs);
  return new JobService(deps, { store, scheduler, notifier });
}
