// The in-process Notifier (notifier.ts): each finished job's webhook is delivered by this process.
import { webhookMessageId } from '../../webhooks/signing.ts';
import type { Deliver, Notifier } from '../notifier.ts';

export class LocalNotifier implements Notifier {
  readonly #stop = new AbortController();
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #notified = new Set<string>();
  #deliver: Deliver | undefined;
  // A delivery waits out its retries in place: nothing else here would run it again.
  readonly defersRetries = false;

  // Nothing gives a delivery up here: it runs once, with its own retries, and records its own end.
  start(deliver: Deliver): void {
    this.#deliver = deliver;
  }

  async notify(jobId: string): Promise<void> {
    const deliver = this.#deliver;
    if (deliver === undefined || this.#notified.has(jobId)) return;
    this.#notified.add(jobId);
    const delivery = deliver(jobId, webhookMessageId(jobId), this.#stop.signal)
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
