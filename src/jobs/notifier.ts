// When a job ends, its webhook is delivered: one message per job, with a webhook-id kept across
// retries. One interface, two implementations: in process (memory/notifier.ts), and through BullMQ
// (redis/notifier.ts) where each webhook is its own queued job that any replica may deliver.

import type { DeliveryProgress } from '../webhooks/delivery.ts';

export type { DeliveryProgress };

/**
 * What a delivery asks of its notifier: nothing once it has ended (delivered, failed, or nothing to
 * send), or, where the notifier defers retries, to be run again at `retryAt` (epoch ms) from `progress`.
 */
export type DeliverOutcome = { retryAt: number; progress: DeliveryProgress } | undefined;

/**
 * Builds and sends the job's webhook message (with its own retries, or its next attempt only where the
 * notifier defers retries; `resume` is then the progress its last run answered). Rejects only when
 * cut off by shutdown, or when the job store cannot be read.
 */
export type Deliver = (jobId: string, messageId: string, signal: AbortSignal, resume?: DeliveryProgress) => Promise<DeliverOutcome>;

/**
 * Records that a webhook will not be tried again: a shared queue gave it up after its attempts (each
 * a store that could not be read, or a replica that stopped mid-delivery), `attempts` HTTP attempts
 * having been made by its deferred runs. Rejects with JobsUnavailableError while the store cannot record it.
 */
export type GaveUp = (jobId: string, messageId: string, reason: string, attempts?: number) => Promise<void>;

export interface Notifier {
  /** Whether Deliver answers a retry's time rather than waiting for it (the notifier then runs it again). */
  readonly defersRetries: boolean;
  start(deliver: Deliver, gaveUp: GaveUp): void;
  /** Schedules the job's webhook; a second call for the same job adds nothing. */
  notify(jobId: string): Promise<void>;
  /** Waits for deliveries in progress here; at `deadline` they are aborted. */
  drain(deadline: AbortSignal): Promise<void>;
}
