// Dynamic batching inside one worker: segments from every task the worker holds share ONNX runs,
// so under load the model runs on larger batches (cheaper per segment) without delaying a lone request.
// A run takes segments from the tasks in turn, not first come first served: a 200,000-character task
// queues dozens of runs' worth of segments, and a small request's few segments beside it ride in the
// next run instead of waiting for all of them.

interface Entry<I, O> {
  item: I;
  cancelled: () => boolean;
  resolve: (o: O) => void;
  reject: (e: unknown) => void;
}

export class CancelledError extends Error {
  constructor() {
    super('cancelled');
    this.name = 'CancelledError';
  }
}

export interface BatchLimits<I> {
  /** Most items per run. */
  maxItems: number;
  /** Most total cost per run (a run always takes at least one item). */
  maxCost: number;
  cost: (item: I) => number;
}

export class MicroBatcher<I, O> {
  readonly #run: (items: I[]) => Promise<O[]>;
  readonly #limits: BatchLimits<I>;
  /** One queue per submitted task, in submission order; each keeps its items in order. */
  #queues: Array<Array<Entry<I, O>>> = [];
  #busy = false;

  /** `run` maps a batch of items to their outputs, in order. */
  constructor(run: (items: I[]) => Promise<O[]>, limits: BatchLimits<I>) {
    this.#run = run;
    this.#limits = limits;
  }

  /** Resolves with each item's output; rejects CancelledError if `cancelled()` before its run. */
  submit(items: readonly I[], cancelled: () => boolean): Promise<O[]> {
    const queue: Array<Entry<I, O>> = [];
    const results = items.map((item) => new Promise<O>((resolve, reject) => queue.push({ item, cancelled, resolve, reject })));
    if (queue.length > 0) this.#queues.push(queue);
    this.#schedule();
    return Promise.all(results);
  }

  #schedule(): void {
    if (this.#busy || this.#queues.length === 0) return;
    this.#busy = true;
    // setImmediate lets tokenization callbacks that are already due add their segments first.
    setImmediate(() => void this.#flush());
  }

  /** The next run: one item from each task in turn, until a limit is reached or every queue is empty. */
  #take(): Array<Entry<I, O>> {
    const { maxItems, maxCost, cost } = this.#limits;
    const batch: Array<Entry<I, O>> = [];
    let total = 0;
    // Taken items are counted per queue and removed with one splice each: a 500,000-character
    // conversation queues thousands of items, and repeated shift() would be quadratic.
    const taken = this.#queues.map(() => 0);
    let full = false;
    for (let progress = true; progress && !full; ) {
      progress = false;
      for (let q = 0; q < this.#queues.length && !full; q++) {
        const queue = this.#queues[q] as Array<Entry<I, O>>;
        let i = taken[q] as number;
        // Cancelled items are rejected as they are reached and take no room.
        while (i < queue.length && (queue[i] as Entry<I, O>).cancelled()) {
          (queue[i] as Entry<I, O>).reject(new CancelledError());
          i++;
        }
        taken[q] = i;
        if (i >= queue.length) continue;
        const e = queue[i] as Entry<I, O>;
        const c = cost(e.item);
        if (batch.length > 0 && (total + c > maxCost || batch.length >= maxItems)) {
          full = true;
          break;
        }
        total += c;
        batch.push(e);
        taken[q] = i + 1;
        progress = true;
      }
    }
    this.#queues.forEach((queue, q) => queue.splice(0, taken[q] as number));
    this.#queues = this.#queues.filter((queue) => queue.length > 0);
    return batch;
  }

  async #flush(): Promise<void> {
    const batch = this.#take();
    try {
      if (batch.length > 0) {
        const out = await this.#run(batch.map((e) => e.item));
        batch.forEach((e, i) => e.resolve(out[i] as O));
      }
    } catch (err) {
      for (const e of batch) e.reject(err);
    } finally {
      this.#busy = false;
      this.#schedule();
    }
  }
}
