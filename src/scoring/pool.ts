// The worker pool (piscina) and its queue. Queued tasks can be withdrawn; a task a worker is already
// running is never aborted, because piscina would terminate that worker (and its loaded model) to do it.
import { Piscina, ArrayTaskQueue } from 'piscina';
import { WORKER_LOAD_FAILED, type ScoreRequest } from './types.ts';
import { randomUUID } from 'node:crypto';
import type { WorkerConfig, WorkerReadiness, WorkerResult, WorkerTask } from './worker.ts';

const WORKER_FILE = new URL('./worker.ts', import.meta.url);

/** What piscina pushes into its queue: a task carrying our payload, settled through done(). */
interface QueuedTask {
  task: WorkerTask | null;
  done(err: Error | null, result?: unknown): void;
}

export class WithdrawnError extends Error {
  constructor() {
    super('task withdrawn from the queue');
    this.name = 'WithdrawnError';
  }
}

/**
 * piscina's array queue, plus withdrawal of a waiting task. piscina's own AbortSignal support is not
 * used: it terminates the worker when the task is already running, and it keeps abortable tasks out of
 * the bounded queue. A withdrawn task is settled with WithdrawnError, as piscina settles its own aborts.
 */
class WithdrawableQueue extends ArrayTaskQueue {
  /** ArrayTaskQueue's own array of waiting tasks. */
  get #tasks(): QueuedTask[] {
    return (this as unknown as { tasks: QueuedTask[] }).tasks;
  }

  withdraw(cancel: Int32Array): boolean {
    const tasks = this.#tasks;
    const index = tasks.findIndex((t) => t.task !== null && t.task.cancel === cancel);
    if (index === -1) return false;
    const [task] = tasks.splice(index, 1);
    task?.done(new WithdrawnError());
    return true;
  }

  /** Settles every waiting task with PoolClosedError. */
  withdrawAll(): void {
    const tasks = this.#tasks;
    for (const task of tasks.splice(0, tasks.length)) task.done(new PoolClosedError());
  }
}

export class QueueFullError extends Error {
  constructor() {
    super('scoring queue is full');
    this.name = 'QueueFullError';
  }
}

/** The pool is closing or closed: it takes no new task (piscina would start new workers for one). */
export class PoolClosedError extends Error {
  constructor() {
    super('scoring pool closed');
    this.name = 'PoolClosedError';
  }
}

/** The worker running a task exited; piscina starts another. */
export class WorkerLostError extends Error {
  constructor(options: { cause: unknown }) {
    super('the scoring worker running this task stopped', options);
    this.name = 'WorkerLostError';
  }
}

/** A worker has no model (a replacement could not load one): the pool can no longer score everything it is sent. */
export class WorkerBrokenError extends Error {
  constructor(reason: string) {
    super(`a scoring worker could not load the model: ${reason}`);
    this.name = 'WorkerBrokenError';
  }
}

/**
 * piscina's rejection for the tasks of a worker that exited (piscina gives it no code, only this text).
 * A worker over its heap limit is not counted: the task that filled it would fill the next one too, so
 * it stays a failure (500, logged) rather than something to try again.
 */
function isWorkerLoss(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('worker exited with code');
}

/** A handle on one submitted task: its result, and a way to cancel it. */
export interface PoolTask {
  result: Promise<WorkerResult>;
  /** Withdraws the task if queued; if running, asks the worker to stop at its next ONNX batch. */
  cancel(): void;
}

export interface PoolOptions extends Omit<WorkerConfig, 'readyChannel'> {
  workers: number;
  maxQueue: number;
  /** Tasks one worker holds at once: while one is tokenized off-thread, another can run ONNX. */
  tasksPerWorker: number;
  /** Called once, with the reason, when the pool turns broken. */
  onBroken?: (reason: string) => void;
}

export class ScoringPool {
  readonly #piscina: Piscina<WorkerTask, WorkerResult>;
  readonly #workers: number;
  readonly #queue = new WithdrawableQueue();
  readonly #ready: Promise<void>;
  #failReadiness: ((err: Error) => void) | undefined;
  #channel: BroadcastChannel | undefined;
  #broken: string | undefined;
  readonly #onBroken: ((reason: string) => void) | undefined;
  #slowTokenizers = 0;
  #pending = 0;
  #closed = false;
  /** Resolves close()'s wait once no task is pending. */
  #drained: (() => void) | undefined;

  constructor(options: PoolOptions) {
    const { workers, maxQueue, tasksPerWorker, onBroken, ...rest } = options;
    this.#onBroken = onBroken;
    const config: WorkerConfig = { ...rest, readyChannel: `scoring-ready-${randomUUID()}` };
    this.#workers = workers;
    this.#ready = this.#collectReadiness(config.readyChannel, workers);
    // onnxruntime's Linux library carries a telemetry uploader that reads ORT_DISABLE_TELEMETRY with
    // getenv(), so it must be in the real process environment (a worker's `env` option only changes the
    // worker's JS copy) before any worker loads the library. An appliance never phones home.
    process.env.ORT_DISABLE_TELEMETRY ??= '1';
    this.#piscina = new Piscina<WorkerTask, WorkerResult>({
      filename: WORKER_FILE.href,
      minThreads: workers,
      maxThreads: workers,
      idleTimeout: Number.POSITIVE_INFINITY,
      maxQueue,
      concurrentTasksPerWorker: tasksPerWorker,
      // 'sync' would block an idle worker in Atomics.wait, stalling its model load and its async work.
      atomics: 'async',
      taskQueue: this.#queue,
      workerData: config,
      // A small young generation keeps each worker's heap from ballooning under sustained load
      // (measured with npm run bench: part of keeping the server's peak RSS under 400 MB).
      resourceLimits: { maxYoungGenerationSizeMb: 6 },
    });
    // A worker that dies outside a task (piscina replaces it) must not crash the process as an
    // unhandled 'error' event; before readiness it fails the load.
    this.#piscina.on('error', (err: unknown) => {
      this.#failReadiness?.(err instanceof Error ? err : new Error(String(err)));
    });
  }

  get queueSize(): number {
    return this.#piscina.queueSize;
  }

  /**
   * Whether every worker tokenizes through the verified fast path (encode.ts); false when one fell
   * back to the native binding, which works but at a fraction of the speed. Meaningful once ready.
   */
  get fastTokenizer(): boolean {
    return this.#slowTokenizers === 0;
  }

  get inFlight(): number {
    return Math.max(0, this.#pending - this.#piscina.queueSize);
  }

  /**
   * Why a worker started after readiness (piscina replaces one that stopped) has no model, or
   * undefined. Such a worker would fail every task it is given, so the scorer reports itself not ready.
   */
  get broken(): string | undefined {
    return this.#broken;
  }

  /** Marks the pool broken (the first reason wins) and reports it once; returns the reason kept. */
  #breaks(reason: string): string {
    if (this.#broken === undefined) {
      this.#broken = reason;
      this.#onBroken?.(reason);
    }
    return this.#broken;
  }

  /**
   * Listens before the workers start, so no announcement is missed, and for as long as the pool
   * lives: a replacement worker announces its load too.
   */
  #collectReadiness(name: string, count: number): Promise<void> {
    const channel = new BroadcastChannel(name);
    this.#channel = channel;
    // Never the reason the process stays up, e.g. when loading timed out and the pool was destroyed.
    channel.unref();
    return new Promise<void>((resolve, reject) => {
      this.#failReadiness = reject;
      let ready = 0;
      channel.onmessage = (event: unknown) => {
        const m = (event as { data: WorkerReadiness }).data;
        if (ready === count) {
          if (!m.ok) this.#breaks(m.error);
        } else if (!m.ok) reject(new Error(m.error));
        else {
          if (!m.fastTokenizer) this.#slowTokenizers++;
          if (++ready === count) resolve();
        }
      };
    }).finally(() => {
      this.#failReadiness = undefined;
    });
  }

  /** Resolves once every worker has loaded the model and run one inference; rejects on the first failure. */
  async ready(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`workers did not load the model within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.#ready, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Submits one task; its result rejects with QueueFullError at once when the queue is full. */
  submit(requests: ScoreRequest[]): PoolTask {
    if (this.#closed) return { result: Promise.reject(new PoolClosedError()), cancel: () => {} };
    const cancelFlag = new Int32Array(new SharedArrayBuffer(4));
    this.#pending++;
    const result = this.#piscina
      .run({ requests, cancel: cancelFlag })
      .catch((err: unknown) => {
        const message = err instanceof Error ? err.message : '';
        if (message === 'Task queue is at limit' || message.startsWith('No task queue available')) throw new QueueFullError();
        if (isWorkerLoss(err)) throw new WorkerLostError({ cause: err });
        if (message.startsWith(WORKER_LOAD_FAILED)) {
          // The task may come back before the worker's announcement does.
          throw new WorkerBrokenError(this.#breaks(message.slice(WORKER_LOAD_FAILED.length)));
        }
        throw err;
      })
      .finally(() => {
        this.#pending--;
        if (this.#pending === 0) this.#drained?.();
      });
    return {
      result,
      cancel: () => {
        Atomics.store(cancelFlag, 0, 1);
        this.#queue.withdraw(cancelFlag);
      },
    };
  }

  /**
   * Stops the pool: queued tasks are refused, tasks a worker is running finish, then the workers stop.
   * A worker terminated inside onnxruntime's run can abort the whole process (a native exception
   * thrown while the worker's environment is torn down: SIGABRT in 5 of 22 shutdowns right after a
   * load whose clients left mid-request), so no worker is stopped mid-task; a running task of an
   * abandoned call has its cancel flag set and stops at its next ONNX run. piscina's own close() is
   * not used: it counts a worker done once per listener it registered, so with two workers it can
   * stop one mid-task (1 abort in 46 such shutdowns).
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#failReadiness?.(new Error('scoring pool closed'));
    this.#channel?.close();
    this.#queue.withdrawAll();
    if (this.#pending > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
    await this.#piscina.destroy();
  }
}
