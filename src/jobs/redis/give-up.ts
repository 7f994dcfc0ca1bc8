// What BullMQ gives up on must still be recorded: after an entry's last attempt (or its last lapsed
// lock) BullMQ calls nothing more, so its job, or its job's webhook, would keep an unfinished state
// for good. Shared by the scheduler (an item) and the notifier (a webhook).
import type { Job } from 'bullmq';
import { fullJitter, sleep } from '../../webhooks/backoff.ts';
import { JobsUnavailableError } from '../types.ts';

/** Tries at recording a give-up while the store is unreachable (about 4 min, 7.5 at most). */
const TRIES = 12;
const RETRY_MS = 2000;
const BACKOFF_CAP_MS = 60_000;

/** Whether a BullMQ 'failed' event is its last word on the entry: no attempt left, or stalled too often. */
export function exhausted(job: Job, err: Error): boolean {
  return job.attemptsMade >= (job.opts.attempts ?? 1) || /stalled/i.test(err.message);
}

/** Runs `record`, again while the store cannot be reached, until it succeeds, fails otherwise, or `stop`. */
export async function recordGiveUp(record: () => Promise<void>, stop: AbortSignal): Promise<void> {
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
