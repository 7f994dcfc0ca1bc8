// The engine's front door: verifies the model package, owns the worker pool, splits work into tasks,
// enforces the queue bound and the per-request timeout, and maps every failure to a ScoringError.
//
// A call's conversations go to the pool in tasks of at most TASK_CHARS characters, at most `workers`
// of them at once per call, so a batch of 100 long chats is streamed through the workers rather than
// copied into them at once (memory), and other calls' tasks take turns with it (fairness). Large calls
// share at most two slots a worker less one, so a small request (one chat, a short batch) never waits
// for a slot behind them: it runs beside the large work, interleaved with it at ONNX-batch granularity.
// Small requests may fill the rest: a worker holding several runs their segments in one ONNX run.
import PQueue from 'p-queue';
import { preview } from './aggregate.ts';
import { loadModelPackage } from './model-package.ts';
import { QueueFullError, ScoringPool, WorkerBrokenError, WorkerLostError, type PoolTask } from './pool.ts';
import type { WorkerPrediction, WorkerResult } from './worker.ts';
import { ScoringError, type ModelManifest, type Prediction, type ScoreObservation, type ScoreOptions, type ScoreRequest, type Scorer } from './types.ts';

export interface ScorerOptions {
  modelDir: string;
  /** MODEL_SHA256: the SHA-256 manifest.json must have, or the model is refused. */
  manifestSha256?: string | undefined;
  /** Worker threads, each with its own tokenizer and ONNX session. */
  workers: number;
  /** onnxruntime intra-op threads per worker. */
  intraOpThreads: number;
  /** Most tasks waiting for a worker; beyond it score() rejects 'overloaded' at once. */
  maxQueue: number;
  /** Per score() call; on expiry queued work is withdrawn and score() rejects 'timeout'. */
  timeoutMs: number;
  onObservation?: (o: ScoreObservation) => void;
  /** Most segments per ONNX run (default 64). */
  maxBatchSegments?: number;
  /**
   * Most padded token slots per ONNX run (default 6,144), bounding activation memory and so peak RSS:
   * halving it from 16,384 took about 35 MB off the bench's peak, and 8,192 -> 6,144 another 28 MB
   * (451 -> 423 MB with model 3.0.0), each at no measurable cost in throughput.
   */
  maxBatchTokens?: number;
  /**
   * Tasks a worker holds at once (default 4), so tokenizing one overlaps running the model on another
   * and, under load, several requests' segments share one ONNX run: with 4 rather than 2, `npm run bench`
   * served 1,751 and 1,427 `/predict`/s against 1,402 and 1,111 (runs alternated on 2 cores), at 915 and
   * 1,127 µs of server CPU a request against 1,128 and 1,420. Large calls hold at most LARGE_TASKS_PER_WORKER.
   */
  tasksPerWorker?: number;
  /** How long workers may take to load the model (default 120 s). */
  loadTimeoutMs?: number;
  /**
   * Called once when a worker started after load (in place of one that exited) has no model, so the
   * scorer is no longer ready: the reason names a file and a hash, never text.
   */
  onDegraded?: (reason: string) => void;
}

export interface EngineScorer extends Scorer {
  /** Why the model is not loaded, for logs; undefined when ready. */
  readonly loadError: string | undefined;
  /** Whether every worker tokenizes through the fast path; undefined until the model is loaded. */
  readonly fastTokenizer: boolean | undefined;
}

/**
 * Most characters one pool task carries (a longer conversation is a task of its own): what a worker
 * holds and tokenizes at once, and how long a small request can wait for a slot's current task.
 */
export const TASK_CHARS = 200_000;
/** A call of at most this many characters is small: it never waits behind large calls for a slot. */
export const SMALL_CALL_CHARS = 50_000;
/**
 * Pool slots a worker that large calls may hold, less one across the pool: what bounds the large text
 * in the workers at once, summed over the pool (memory under 8 maximum-size batches, issue 33),
 * whatever tasksPerWorker allows. piscina places tasks on the least busy worker, so one worker may hold
 * more than two of them.
 */
export const LARGE_TASKS_PER_WORKER = 2;
const DEFAULT_TASKS_PER_WORKER = 4;

/** Consecutive groups of `requests` of at most `maxChars` characters each (a longer one alone). */
export function chunkByCharacters(requests: readonly ScoreRequest[], maxChars: number): number[][] {
  const groups: number[][] = [];
  let current: number[] = [];
  let chars = 0;
  requests.forEach((r, i) => {
    if (current.length > 0 && chars + r.conversation.length > maxChars) {
      groups.push(current);
      current = [];
      chars = 0;
    }
    current.push(i);
    chars += r.conversation.length;
  });
  if (current.length > 0) groups.push(current);
  return groups;
}

class PooledScorer implements EngineScorer {
  readonly #options: ScorerOptions;
  #pool: ScoringPool | undefined;
  #manifest: ModelManifest | undefined;
  #loadError: string | undefined;
  #closed = false;
  /** Large calls' tasks: LARGE_TASKS_PER_WORKER slots a worker less one (every slot but one, where there are two or more), first come first served across calls. */
  readonly #largeWork: PQueue;
  readonly #tasksPerWorker: number;

  constructor(options: ScorerOptions) {
    this.#options = options;
    this.#tasksPerWorker = options.tasksPerWorker ?? DEFAULT_TASKS_PER_WORKER;
    const large = options.workers * Math.min(this.#tasksPerWorker, LARGE_TASKS_PER_WORKER) - 1;
    this.#largeWork = new PQueue({ concurrency: Math.max(1, large) });
  }

  /** False before the model is loaded, after close(), and once a worker has no model (pool.ts broken). */
  get ready(): boolean {
    return this.#pool !== undefined && !this.#closed && this.#pool.broken === undefined;
  }
  get manifest(): ModelManifest | undefined {
    return this.ready ? this.#manifest : undefined;
  }
  get fastTokenizer(): boolean | undefined {
    return this.ready ? this.#pool?.fastTokenizer : undefined;
  }
  get loadError(): string | undefined {
    return this.#loadError ?? this.#pool?.broken;
  }
  /** Tasks waiting for a slot: in the pool's queue, and large calls' waiting at their gate (MAX_QUEUE bounds each). */
  get queueSize(): number {
    return (this.#pool?.queueSize ?? 0) + this.#largeWork.size;
  }
  get inFlight(): number {
    return this.#pool?.inFlight ?? 0;
  }

  async load(): Promise<void> {
    let pool: ScoringPool | undefined;
    try {
      const manifest = await loadModelPackage(this.#options.modelDir, this.#options.manifestSha256);
      pool = new ScoringPool({
        modelDir: this.#options.modelDir,
        manifest,
        intraOpThreads: this.#options.intraOpThreads,
        maxBatchSegments: this.#options.maxBatchSegments ?? 64,
        maxBatchTokens: this.#options.maxBatchTokens ?? 6_144,
        workers: this.#options.workers,
        maxQueue: this.#options.maxQueue,
        tasksPerWorker: this.#tasksPerWorker,
        ...(this.#options.onDegraded ? { onBroken: this.#options.onDegraded } : {}),
      });
      await pool.ready(this.#options.loadTimeoutMs ?? 120_000);
      this.#manifest = manifest;
      this.#pool = pool;
    } catch (err) {
      this.#loadError = err instanceof Error ? err.message : String(err);
      await pool?.close().catch(() => {});
    }
  }

  async score(requests: ScoreRequest[], options?: ScoreOptions): Promise<Prediction[]> {
    const pool = this.#pool;
    if (pool === undefined || !this.ready) {
      const why = this.loadError;
      throw new ScoringError('model_unavailable', `model not loaded${why === undefined ? '' : `: ${why}`}`);
    }
    if (requests.length === 0) return [];
    const signal = options?.signal;
    if (signal?.aborted) throw new ScoringError('timeout', 'scoring cancelled before it started');

    const totalChars = requests.reduce((n, r) => n + r.conversation.length, 0);
    // A call that fits in one task per worker is cut evenly across the workers (a 100-chat batch in two
    // halves, not 200,000 characters and a remainder): every worker takes a share, as before streaming.
    const groups = chunkByCharacters(requests, Math.min(TASK_CHARS, Math.ceil(totalChars / this.#options.workers)));
    const gate = totalChars > SMALL_CALL_CHARS ? this.#largeWork : undefined;
    // Ends the call's waiting (in the large-work queue) and withdraws its queued pool tasks.
    const stop = new AbortController();
    const running = new Set<PoolTask>();
    const cancelAll = (): void => {
      stop.abort();
      for (const t of running) t.cancel();
    };
    const results = new Array<WorkerResult>(groups.length);
    const runGroup = async (g: number): Promise<void> => {
      const submit = async (): Promise<WorkerResult> => {
        const task = pool.submit((groups[g] as number[]).map((i) => requests[i] as ScoreRequest));
        running.add(task);
        try {
          return await task.result;
        } finally {
          running.delete(task);
        }
      };
      if (gate === undefined) {
        results[g] = await submit();
        return;
      }
      // MAX_QUEUE bounds what waits for a slot here too, as it does in the pool's own queue.
      if (gate.size >= this.#options.maxQueue) throw new QueueFullError();
      results[g] = await gate.add(submit, { signal: stop.signal });
    };
    // At most `workers` of this call's tasks wait or run at once: the next starts as one finishes.
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < groups.length && !stop.signal.aborted) await runGroup(next++);
    };
    const all = Promise.all(Array.from({ length: Math.min(this.#options.workers, groups.length) }, lane));

    const timeoutMs = options?.timeoutMs ?? this.#options.timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        cancelAll();
        reject(new ScoringError('timeout', `scoring took longer than ${timeoutMs} ms`));
      }, timeoutMs);
      if (signal !== undefined) {
        onAbort = () => {
          cancelAll();
          reject(new ScoringError('timeout', 'scoring cancelled'));
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });

    try {
      await Promise.race([all, stopped]);
      return this.#assemble(requests, groups, results);
    } catch (err) {
      cancelAll();
      if (err instanceof ScoringError) throw err;
      if (this.#closed) throw new ScoringError('model_unavailable', 'scorer closed', { cause: err });
      if (err instanceof QueueFullError) throw new ScoringError('overloaded', 'scoring queue is full', { cause: err });
      if (err instanceof WorkerLostError) throw new ScoringError('interrupted', 'a scoring worker stopped', { cause: err });
      if (err instanceof WorkerBrokenError) throw new ScoringError('model_unavailable', err.message, { cause: err });
      throw new ScoringError('internal', 'scoring failed', { cause: err });
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
      // Rejections of work that lost the race are expected; keep them from surfacing as unhandled.
      all.catch(() => {});
    }
  }

  #assemble(requests: ScoreRequest[], groups: number[][], results: WorkerResult[]): Prediction[] {
    const out = new Array<Prediction>(requests.length);
    let inferenceSeconds = 0;
    const segments = new Array<number>(requests.length);
    results.forEach((result, g) => {
      if (result.kind !== 'scored') throw new Error(`worker answered ${result.kind} to a scoring task`);
      // Worker time of the call, summed over its tasks (they run in turns and side by side).
      inferenceSeconds += result.inferenceSeconds;
      const indices = groups[g] as number[];
      result.predictions.forEach((p: WorkerPrediction, k) => {
        const i = indices[k] as number;
        out[i] = { conversation_preview: preview((requests[i] as ScoreRequest).conversation), ...p };
        segments[i] = p.num_segments;
      });
    });
    this.#options.onObservation?.({ inferenceSeconds, segments });
    return out;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool?.close();
  }
}

/** Never throws for a bad model: the scorer then reports ready=false and rejects 'model_unavailable'. */
export async function createScorer(options: ScorerOptions): Promise<EngineScorer> {
  const scorer = new PooledScorer(options);
  await scorer.load();
  return scorer;
}
