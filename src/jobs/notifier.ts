// When a job ends, its webhook is delivered: one message per job, with a webhook-id kept across
// retries. One interface, two implementations: in process (memory/notifier.ts), and through BullMQ
// (redis/notifier.ts) where each webhook is its own queued job that any replica may deliver.

/** Builds and sends the job's webhook message (with its own retries); rejects only when cut off by shutdown. */
export type Deliver = (jobId: string, messageId: string, signal: AbortSignal) => Promise<void>;

/**
 * Records that a webhook will not be tried again: a shared queue gave it up after its attempts (each
 * a store that could not be read, or a replica that stopped mid-delivery). Rejects with
 * JobsUnavailableError while the store cannot record it.
 */
export type GaveUp = (jobId: string, messageId: string, reason: string) => Promise<void>;

export interface Notifier {
  start(deliver: Deliver, gaveUp: GaveUp): void;
  /** Schedules the job's webhook; a second call for the same job adds nothing. */
  notify(jobId: string): Promise<void>;
  /** Waits for deliveries in progress here; at `deadline` they are aborted. */
  drain(deadline: AbortSignal): Promise<void>;
}
