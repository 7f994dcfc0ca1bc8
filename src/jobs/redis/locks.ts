// BullMQ's lock settings for JOB_LOCK_MS, shared by the item and webhook workers. With BullMQ's
// defaults (lockDuration and stalledInterval both JOB_LOCK_MS, the lock renewed every half of it) an
// item held by a replica killed with kill -9 went to another after two to three times JOB_LOCK_MS
// (measured: 6 to 9 s at 3 s): the stalled check must first mark the item, then find it still marked
// and its lock gone at a later check; and a check finding the previous one's guard key not quite
// expired is skipped, so checks came every 2 × stalledInterval. Checking and renewing every
// twentieth of JOB_LOCK_MS instead, a silent replica's lock lapses between 0.95 and 1 times
// JOB_LOCK_MS after its last word, and the next check (within two ticks) hands the item over:
// between 0.95 and 1.1 times JOB_LOCK_MS in all (test/unit/jobs/redis/takeover.test.ts).
import type { Job, WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';

/** Checks and renewals per JOB_LOCK_MS: the takeover comes at most 2 / LOCK_TICKS late. */
export const LOCK_TICKS = 20;
/** The shortest tick, so a tiny JOB_LOCK_MS does not spin timers (BullMQ renews every half tick). */
const MIN_TICK_MS = 10;

export function lockOptions(lockMs: number): Pick<WorkerOptions, 'lockDuration' | 'lockRenewTime' | 'stalledInterval'> {
  const tick = Math.max(MIN_TICK_MS, Math.floor(lockMs / LOCK_TICKS));
  return {
    // How long a lock holds after its last renewal: how long a silent replica keeps an item.
    lockDuration: lockMs,
    // A live replica's lock always has at least 0.95 × JOB_LOCK_MS to run.
    lockRenewTime: tick,
    // One check per tick across all replicas (BullMQ guards it with a key that lasts one tick).
    stalledInterval: tick,
  };
}

// BullMQ's job.updateData writes for whichever run calls it. A run whose lock lapsed (its replica
// stalled and another took the entry over) would write its older progress over the newer run's. This
// is the same write, made only while the caller's token still holds the entry's lock, which BullMQ
// keeps at `<job key>:lock` (its own scripts read it there).
const UPDATE_IF_LOCKED = `if redis.call('GET', KEYS[1] .. ':lock') ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[2])
return 1`;

/** Writes the entry's data if `token` still holds its lock; whether it did. Rejects when Redis fails. */
export async function updateDataWhileLocked<T>(client: Redis, job: Job<T>, token: string | undefined, data: T): Promise<boolean> {
  if (token === undefined || job.id === undefined) return false;
  const written = await client.eval(UPDATE_IF_LOCKED, 1, `${job.queueQualifiedName}:${job.id}`, token, JSON.stringify(data));
  return written === 1;
}
