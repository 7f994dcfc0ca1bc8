// BullMQ's lock settings for JOB_LOCK_MS, shared by the item and webhook workers. With BullMQ's
// defaults (lockDuration and stalledInterval both JOB_LOCK_MS, the lock renewed every half of it) an
// item held by a replica killed with kill -9 went to another after two to three times JOB_LOCK_MS
// (measured: 6 to 9 s at 3 s): the stalled check must first mark the item, then find it still marked
// and its lock gone at a later check; and a check finding the previous one's guard key not quite
// expired is skipped, so checks came every 2 × stalledInterval. Checking and renewing every
// twentieth of JOB_LOCK_MS instead, a silent replica's lock lapses between 0.95 and 1 times
// JOB_LOCK_MS after its last word, and the next check (within two ticks) hands the item over:
// between 0.95 and 1.1 times JOB_LOCK_MS in all (test/unit/jobs/redis/takeover.test.ts).
import type { WorkerOptions } from 'bullmq';

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
