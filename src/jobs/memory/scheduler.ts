// In-process scheduling (the Scheduler of scheduler.ts): fair round-robin over keys, the text in this
// process's memory only.
import type { ItemHandler, QueuedItem, Scheduler } from '../scheduler.ts';

interface JobQueue {
  jobId: string;
  items: Array<QueuedItem | undefined>;
  next: number;
}

/** In-process scheduling: round-robin over keys, FIFO within a key, so one key's big jobs cannot starve another's. */
export class LocalScheduler implements Scheduler {
  readonly requeuesInterrupted = false;
  readonly #concurrency: number;
  /** Jobs with items left to start, per key; keys are served in rotation. */
  readonly #runnable = new Map<string, JobQueue[]>();
  readonly #stop = new AbortController();
  #handler: ItemHandler | undefined;
  #active = 0;
  #stopping = false;
  #idleWaiters: Array<() => void> = [];

  constructor(concurrency: number) {
    this.#concurrency = Math.max(1, concurrency);
  }

  start(handler: ItemHandler): void {
    this.#handler = handler;
    this.#pump();
  }

  async enqueue(items: QueuedItem[]): Promise<void> {
    if (items.length === 0) return;
    const first = items[0] as QueuedItem;
    const job: JobQueue = { jobId: first.jobId, items: [...items], next: 0 };
    const queue = this.#runnable.get(first.keyId);
    if (queue === undefined) this.#runnable.set(first.keyId, [job]);
    else queue.push(job);
    this.#pump();
  }

  cancel(jobId: string): QueuedItem[] {
    const dropped: QueuedItem[] = [];
    for (const [keyId, queue] of this.#runnable) {
      const job = queue.find((j) => j.jobId === jobId);
      if (job === undefined) continue;
      dropped.push(...this.#withdraw(job));
      const rest = queue.filter((j) => j !== job);
      if (rest.length > 0) this.#runnable.set(keyId, rest);
      else this.#runnable.delete(keyId);
    }
    this.#checkIdle();
    return dropped;
  }

  async drain(deadline: AbortSignal): Promise<QueuedItem[]> {
    const onDeadline = (): void => this.#stop.abort(deadline.reason);
    deadline.addEventListener('abort', onDeadline, { once: true });
    if (deadline.aborted) onDeadline();
    try {
      await new Promise<void>((resolve) => {
        this.#stop.signal.addEventListener('abort', () => resolve(), { once: true });
        void this.#whenIdle().then(resolve);
      });
    } finally {
      deadline.removeEventListener('abort', onDeadline);
    }
    // Whatever is left never started and never will: the caller fails those jobs.
    this.#stopping = true;
    const left: QueuedItem[] = [];
    for (const queue of this.#runnable.values()) for (const job of queue) left.push(...this.#withdraw(job));
    this.#runnable.clear();
    // Items still running at the deadline were handed the aborted signal, so they end at once; wait for
    // them, or a job whose last item was running would end (and queue its webhook) after the caller
    // has drained the notifier, and the process exits without sending it.
    await this.#whenIdle();
    return left;
  }

  /** Resolves once no item runs and none waits (at once if so already). */
  #whenIdle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#idleWaiters.push(resolve);
      this.#checkIdle();
    });
  }

  #withdraw(job: JobQueue): QueuedItem[] {
    const out: QueuedItem[] = [];
    for (let i = job.next; i < job.items.length; i++) {
      const item = job.items[i];
      if (item !== undefined) out.push(item);
      job.items[i] = undefined;
    }
    job.next = job.items.length;
    return out;
  }

  #pick(): QueuedItem | undefined {
    const entry = this.#runnable.entries().next();
    if (entry.done) return undefined;
    const [keyId, queue] = entry.value;
    const job = queue[0] as JobQueue;
    const item = job.items[job.next] as QueuedItem;
    // The text leaves this scheduler with the item: the handler's copy is the last one.
    job.items[job.next] = undefined;
    job.next++;
    // Move this key to the back of the rotation.
    this.#runnable.delete(keyId);
    if (job.next >= job.items.length) queue.shift();
    if (queue.length > 0) this.#runnable.set(keyId, queue);
    return item;
  }

  #pump(): void {
    const handler = this.#handler;
    if (handler === undefined) return;
    while (this.#active < this.#concurrency && !this.#stopping && !this.#stop.signal.aborted) {
      const item = this.#pick();
      if (item === undefined) break;
      this.#active++;
      void handler(item, this.#stop.signal)
        .catch(() => undefined)
        .finally(() => {
        this.#active--;
        this.#pump();
        this.#checkIdle();
      });
    }
  }

  #checkIdle(): void {
    if (this.#active > 0 || this.#runnable.size > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }
}
