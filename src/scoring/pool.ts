// The worker pool (piscina) and its queue. Queued tasks can be withdrawn; a task a worker is already
// running is never aborted, because piscina would terminate that worker (and its loaded model) to do it.
import { Piscina, ArrayTaskQueue } from 'piscina';
import type { ScoreRequest } from './types.ts';
import type { WorkerConfig, WorkerResult, WorkerTask } from './worker.ts';

const WORKER_FILE = new URL('./worker.ts', import.meta.url);

/**
 * A signal piscina listens to. It fires only while its task is still in the queue; the queue below
 * records that, since piscina pushes a task object carrying the signal it was given.
 */
class QueuedTaskSignal {
  aborted = false;
  reason: unknown = undefined;
  queued = false;
  #listeners = new Set<() => void>();
  addEventListener(_name: 'abort', listener: () => void): void {
    this.#listeners.add(listener);
  }
  removeEventListener(_name: 'abort', listener: () => void): void {
    this.#listeners.delete(listener);
  }
  /** Withdraws the task when it is still waiting; returns whether it was. */
  abortIfQueued(reason: unknown): boolean {
    if (!this.queued || this.aborted) return false;
    this.aborted = true;
    this.reason = reason;
    for (const l of [...this.#listeners]) l();
    return true;
  }
}

function signalOf(task: unknown): QueuedTaskSignal | undefined {
  const s = (task as { abortSignal?: unknown }).abortSignal;
  return s instanceof QueuedTaskSignal ? s : undefined;
}

/** piscina's array queue, marking each task's signal while the task waits in it. */
class TrackingQueue extends ArrayTaskQueue {
  override push(task: Parameters<ArrayTaskQueue['push']>[0]): void {
    const s = signalOf(task);
    if (s !== undefined) s.queued = true;
    super.push(task);
  }
  override unshift(task: Parameters<ArrayTaskQueue['push']>[0]): void {
    const s = signalOf(task);
    if (s !== undefined) s.queued = true;
    super.unshift(task);
  }
  override shift(): ReturnType<ArrayTaskQueue['shift']> {
    const task = super.shift();
    const s = task === null ? undefined : signalOf(task);
    if (s !== undefined) s.queued = false;
    return task;
  }
  override remove(task: Parameters<ArrayTaskQueue['remove']>[0]): void {
    const s = signalOf(task);
    if (s !== undefined) s.queued = false;
    super.remove(task);
  }
}

export class QueueFullError extends Error {
  constructor() {
    super('scoring queue is full');
    this.name = 'QueueFullError';
  }
}

/** A handle on one submitted task: its result, and a way to cancel it. */
export interface PoolTask {
  result: Promise<WorkerResult>;
  /** Withdraws the task if queued; if running, asks the worker to stop at its next ONNX batch. */
  cancel(): void;
}

export interface PoolOptions extends WorkerConfig {
  workers: number;
  maxQueue: number;
}

export class ScoringPool {
  readonly #piscina: Piscina<WorkerTask, WorkerResult>;
  readonly #workers: number;
  #pending = 0;

  constructor(options: PoolOptions) {
    const { workers, maxQueue, ...config } = options;
    this.#workers = workers;
    this.#piscina = new Piscina<WorkerTask, WorkerResult>({
      filename: WORKER_FILE.href,
      minThreads: workers,
      maxThreads: workers,
      idleTimeout: Number.POSITIVE_INFINITY,
      maxQueue,
      concurrentTasksPerWorker: 1,
      taskQueue: new TrackingQueue(),
      workerData: config,
    });
  }

  get queueSize(): number {
    return this.#piscina.queueSize;
  }

  get inFlight(): number {
    return Math.max(0, this.#pending - this.#piscina.queueSize);
  }

  /** Resolves once every worker has loaded the model and run one inference. */
  async warmup(timeoutMs: number): Promise<void> {
    const barrier = new Int32Array(new SharedArrayBuffer(4));
    const count = this.#workers;
    await Promise.all(Array.from({ length: count }, () => this.#piscina.run({ kind: 'warmup', barrier, count, timeoutMs })));
  }

  /** Submits one task; its result rejects with QueueFullError at once when the queue is full. */
  submit(requests: ScoreRequest[]): PoolTask {
    const cancelFlag = new Int32Array(new SharedArrayBuffer(4));
    const signal = new QueuedTaskSignal();
    this.#pending++;
    const result = this.#piscina
      .run({ kind: 'score', requests, cancel: cancelFlag }, { signal })
      .catch((err: unknown) => {
        const message = err instanceof Error ? err.message : '';
        if (message === 'Task queue is at limit' || message.startsWith('No task queue available')) throw new QueueFullError();
        throw err;
      })
      .finally(() => {
        this.#pending--;
      });
    return {
      result,
      cancel: () => {
        Atomics.store(cancelFlag, 0, 1);
        signal.abortIfQueued(new Error('cancelled'));
      },
    };
  }

  async destroy(): Promise<void> {
    await this.#piscina.destroy();
  }
}
