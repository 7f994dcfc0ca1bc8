// What BullMQ gives up on must still be recorded: after an entry's last attempt (or its last lapsed
// lock) BullMQ calls nothing more, so its job, or its job's webhook, would keep an unfinished state
// for good. Shared by the scheduler (an item) and the notifier (a webhook).
import type { Job, Worker } from 'bullmq';
import { untilAborted } from '../../ops/redis.ts';
import { fullJitter, sleep } from '../../webhooks/backoff.ts';
import { JobsUnavailableError } from '../types.ts';

/** Tries at recording a give-up while the store is unreachable (about 4 min, 7.5 at most). */
const TRIES = 12;
const RETRY_MS = 2000;
const BACKOFF_CAP_MS = 60_000;
/**
 * Past a drain's deadline, how long an entry cut off there has to fail and have its give-up recorded:
 * a few Redis round trips, kept short since it comes out of what the shutdown grace period has left.
 */
const GRACE_MS = 250;

/** Whether BullMQ failed the entry for stalling too often (its locks lapsed: replicas stopped). */
export function stalledOut(err: Error): boolean {
  return /stalled/i.test(err.message);
}

/** Whether a BullMQ 'failed' event is its last word on the entry: no attempt left, or stalled too often. */
export function exhausted(job: Job, err: Error): boolean {
  return job.attemptsMade >= (job.opts.attempts ?? 1) || stalledOut(err);
}

/**
 * The give-ups one worker is recording: each runs `record`, again while the store cannot be reached,
 * until it succeeds, fails otherwise, or `stop`; the worker's drain waits for them (settle).
 */
export class GiveUps {
  /** Aborted with the worker's stop, or once settled: no retry outlives the drain. */
  readonly #stop = new AbortController();
  readonly #recording = new Set<Promise<void>>();

  constructor(stop: AbortSignal) {
    if (stop.aborted) this.#stop.abort();
    else stop.addEventListener('abort', () => this.#stop.abort(), { once: true });
  }

  record(record: () => Promise<void>): void {
    const recording = retried(record, this.#stop.signal).finally(() => this.#recording.delete(recording));
    this.#recording.add(recording);
  }

  /**
   * After drainQueueWorker: an entry cut off at the deadline still fails and, on its last try, is given
   * up; a short wait lets both reach Redis before it closes (the give-up gets one try once stopping).
   */
  async settle(worker: Worker | undefined): Promise<void> {
    const grace = AbortSignal.timeout(GRACE_MS);
    await untilAborted(Promise.allSettled([worker?.close()]), grace).catch(() => undefined);
    await untilAborted(Promise.allSettled([...this.#recording]), grace).catch(() => undefined);
    this.#stop.abort();
  }
}

async function retried(record: () => Promise<void>, stop: AbortSignal): Promise<void> {
  for (let retry = 0; retry < TRIES; retry++) {
    try {
      await record();
      return;
    } catch (err) {
      if (!(err instanceof JobsUnavailableError)) return;
    }
    try {
      await sleep(RETRY_MS + fullJitter(RETRY_MS, retry, BACKOFF_CAP_MS), stop);
    } catch {
      return;
    }
  }
}
