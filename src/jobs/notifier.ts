// When a job ends, its webhook is delivered: one message per job, with a webhook-id kept across
// retries. One interface, two implementations: in process (memory/notifier.ts), and through BullMQ
// (redis/notifier.ts) where each webhook is its own queued job that any replica may deliver.

/** Builds and sends the job's webhook message (with its own retries); rejects only when cut off by shutdown. */
export type Deliver = (jobId: string, messageId: string, signal: AbortSignal) => Promise<void>;

export interface Notifier {
  start(deliver: Deliver): void;
  /** Schedules the job's webhook; a second call for the same job adds nothing. */
  notify(jobId: string): Promise<void>;
  /** Waits for deliveries in progress here; at `deadline` they are aborted. */
  drain(deadline: AbortSignal): Promise<void>;
}
