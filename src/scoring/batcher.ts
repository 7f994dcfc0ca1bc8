// Dynamic batching inside one worker: segments from every task the worker holds share ONNX runs,
// so under load the model runs on larger batches (cheaper per segment) without delaying a lone request.

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
  #pending: Array<Entry<I, O>> = [];
  #busy = false;

  /** `run` maps a batch of items to their outputs, in order. */
  constructor(run: (items: I[]) => Promise<O[]>, limits: BatchLimits<I>) {
    this.#run = run;
    this.#limits = limits;
  }

  /** Resolves with each item's output; rejects CancelledError if `cancelled()` before its run. */
  submit(items: readonly I[], cancelled: () => boolean): Promise<O[]> {
    const results = items.map(
      (item) => new Promise<O>((resolve, reject) => this.#pending.push({ item, cancelled, resolve, reject })),
    );
    this.#schedule();
    return Promise.all(results);
  }

  #schedule(): void {
    if (this.#busy || this.#pending.length === 0) return;
    this.#busy = true;
    // setImmediate lets tokenization callbacks that are already due add their segments first.
    setImmediate(() => void this.#flush());
  }

  async #flush(): Promise<void> {
    const { maxItems, maxCost, cost } = this.#limits;
    const batch: Array<Entry<I, O>> = [];
    let total = 0;
    let taken = 0;
    while (batch.length < maxItems && taken < this.#pending.length) {
      const e = this.#pending[taken] as Entry<I, O>;
      if (e.cancelled()) {
        e.reject(new CancelledError());
        taken++;
        continue;
      }
      const c = cost(e.item);
      if (batch.length > 0 && total + c > maxCost) break;
      total += c;
      batch.push(e);
      taken++;
    }
    // One splice instead of repeated shift(): a 500,000-character conversation queues thousands of items.
    this.#pending.splice(0, taken);
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
