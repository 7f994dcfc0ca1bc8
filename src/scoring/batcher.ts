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

export class MicroBatcher<I, O> {
  readonly #run: (items: I[]) => Promise<O[]>;
  readonly #maxBatch: number;
  #pending: Array<Entry<I, O>> = [];
  #busy = false;

  /** `run` maps a batch of items to their outputs, in order; at most `maxBatch` items per run. */
  constructor(run: (items: I[]) => Promise<O[]>, maxBatch: number) {
    this.#run = run;
    this.#maxBatch = maxBatch;
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
    const batch: Array<Entry<I, O>> = [];
    while (batch.length < this.#maxBatch && this.#pending.length > 0) {
      const e = this.#pending.shift() as Entry<I, O>;
      if (e.cancelled()) e.reject(new CancelledError());
      else batch.push(e);
    }
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
