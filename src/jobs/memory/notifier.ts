// When a job ends, its webhook is delivered: one message per job, with a webhook-id kept across
// retries. One interface, two implementations: this in-process one, and the BullMQ one
// (redis/notifier.ts) where each webhook is its own queued job that any replica may deliver.
import { newMessageId } from '../../webhooks/signing.ts';

/** Builds and sends the job's webhook message (with its own retries); rejects only when cut off by shutdown. */
export type Deliver = (jobId: string, messageId: string, signal: AbortSignal) => Promise<void>;

export interface Notifier {
  start(deliver: Deliver): void;
  /** Schedules the job's webhook; a second call for the same job adds nothing. */
  notify(jobId: string): Promise<void>;
  /** Waits for deliveries in progress here; at `deadline` they are aborted. */
  drain(deadline: AbortSignal): Promise<void>;
}

export class LocalNotifier implements Notifier {
  readonly #stop = new AbortController();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #notified = new Set<string>();
  #deliver: Deliver | undefined;

  start(deliver: Deliver): void {
    this.#deliver = deliver;
  }

  async notify(jobId: string): Promise<void> {
    const deliver = this.#deliver;
    if (deliver === undefined || this.#notified.has(jobId)) return;
    this.#notified.add(jobId);
    const delivery = deliver(jobId, newMessageId(), this.#stop.signal)
      .catch(() => undefined)
      .finally(() => {
      this.#inFlight.delete(delivery);
      this.#notified.delete(jobId);
    });
    this.#inFlight.add(delivery);
  }

  async drain(deadline: AbortSignal): Promise<void> {
    const onDeadline = (): void => this.#stop.abort(deadline.reason);
    if (deadline.aborted) onDeadline();
    deadline.addEventListener('abort', onDeadline, { once: true });
    try {
      while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
    } finally {
      deadline.removeEventListener('abort', onDeadline);
    }
  }
}
