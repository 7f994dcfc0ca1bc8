// The engine's front door: verifies the model package, owns the worker pool, splits work into tasks,
// enforces the queue bound and the per-request timeout, and maps every failure to a ScoringError.
import { preview } from './aggregate.ts';
import { loadModelPackage } from './model-package.ts';
import { QueueFullError, ScoringPool, type PoolTask } from './pool.ts';
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
  /** Tasks a worker holds at once (default 2), so tokenizing one overlaps running the model on another. */
  tasksPerWorker?: number;
  /** How long workers may take to load the model (default 120 s). */
  loadTimeoutMs?: number;
}

export interface EngineScorer extends Scorer {
  /** Why the model is not loaded, for logs; undefined when ready. */
  readonly loadError: string | undefined;
  /** Whether every worker tokenizes through the fast path; undefined until the model is loaded. */
  readonly fastTokenizer: boolean | undefined;
}

/**
 * Splits a batch into at most `parts` groups of similar total length (longest conversation first, onto
 * the lightest group), so every worker gets a fair share. Returns indices into `requests`, each group
 * in input order.
 */
export function splitByCharacters(requests: readonly ScoreRequest[], parts: number): number[][] {
  const n = Math.min(parts, requests.length);
  if (n <= 1) return [requests.map((_, i) => i)];
  const order = requests.map((_, i) => i).sort((a, b) => (requests[b] as ScoreRequest).conversation.length - (requests[a] as ScoreRequest).conversation.length);
  const groups: number[][] = Array.from({ length: n }, () => []);
  const load = new Array<number>(n).fill(0);
  for (const i of order) {
    let lightest = 0;
    for (let g = 1; g < n; g++) if ((load[g] as number) < (load[lightest] as number)) lightest = g;
    (groups[lightest] as number[]).push(i);
    load[lightest] = (load[lightest] as number) + (requests[i] as ScoreRequest).conversation.length + 1;
  }
  for (const g of groups) g.sort((a, b) => a - b);
  return groups;
}

class PooledScorer implements EngineScorer {
  readonly #options: ScorerOptions;
  #pool: ScoringPool | undefined;
  #manifest: ModelManifest | undefined;
  #loadError: string | undefined;
  #closed = false;

  constructor(options: ScorerOptions) {
    this.#options = options;
  }

  get ready(): boolean {
    return this.#pool !== undefined && !this.#closed;
  }
  get manifest(): ModelManifest | undefined {
    return this.ready ? this.#manifest : undefined;
  }
  get fastTokenizer(): boolean | undefined {
    return this.ready ? this.#pool?.fastTokenizer : undefined;
  }
  get loadError(): string | undefined {
    return this.#loadError;
  }
  get queueSize(): number {
    return this.#pool?.queueSize ?? 0;
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
        tasksPerWorker: this.#options.tasksPerWorker ?? 2,
      });
      await pool.ready(this.#options.loadTimeoutMs ?? 120_000);
      this.#manifest = manifest;
      this.#pool = pool;
    } catch (err) {
      this.#loadError = err instanceof Error ? err.message : String(err);
      await pool?.destroy().catch(() => {});
    }
  }

  async score(requests: ScoreRequest[], options?: ScoreOptions): Promise<Prediction[]> {
    const pool = this.#pool;
    if (pool === undefined || this.#closed) {
      throw new ScoringError('model_unavailable', `model not loaded${this.#loadError === undefined ? '' : `: ${this.#loadError}`}`);
    }
    if (requests.length === 0) return [];
    const signal = options?.signal;
    if (signal?.aborted) throw new ScoringError('timeout', 'scoring cancelled before it started');

    const groups = splitByCharacters(requests, this.#options.workers);
    const tasks: PoolTask[] = groups.map((g) => pool.submit(g.map((i) => requests[i] as ScoreRequest)));
    const cancelAll = (): void => {
      for (const t of tasks) t.cancel();
    };

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
      const results = await Promise.race([Promise.all(tasks.map((t) => t.result)), stopped]);
      return this.#assemble(requests, groups, results);
    } catch (err) {
      cancelAll();
      if (err instanceof ScoringError) throw err;
      if (this.#closed) throw new ScoringError('model_unavailable', 'scorer closed', { cause: err });
      if (err instanceof QueueFullError) throw new ScoringError('overloaded', 'scoring queue is full', { cause: err });
      throw new ScoringError('internal', 'scoring failed', { cause: err });
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
      // Rejections of tasks that lost the race are expected; keep them from surfacing as unhandled.
      for (const t of tasks) t.result.catch(() => {});
    }
  }

  #assemble(requests: ScoreRequest[], groups: number[][], results: WorkerResult[]): Prediction[] {
    const out = new Array<Prediction>(requests.length);
    let inferenceSeconds = 0;
    const segments = new Array<number>(requests.length);
    results.forEach((result, g) => {
      if (result.kind !== 'scored') throw new Error(`worker answered ${result.kind} to a scoring task`);
      // Tasks run in parallel: the request spent as long in inference as its slowest task.
      inferenceSeconds = Math.max(inferenceSeconds, result.inferenceSeconds);
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
    await this.#pool?.destroy();
  }
}

/** Never throws for a bad model: the scorer then reports ready=false and rejects 'model_unavailable'. */
export async function createScorer(options: ScorerOptions): Promise<EngineScorer> {
  const scorer = new PooledScorer(options);
  await scorer.load();
  return scorer;
}
