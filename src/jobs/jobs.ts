// Asynchronous batch jobs of /v2/predict/batch: admission (limits), a fair background runner feeding
// the shared scorer at a bounded concurrency, results kept in memory for a while, and webhook delivery.
// Nothing here is written to disk: a restart loses every job (clients see 404 and resubmit).
import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { Config } from '../config.ts';
import { ScoringError, type Prediction, type ScoreRequest, type Scorer } from '../scoring/types.ts';
import { fullJitter, sleep } from './backoff.ts';
import { deliverWebhook, type DeliveryPolicy } from './delivery.ts';
import { createJobMetrics, type JobMetrics } from './metrics.ts';
import { toV2Prediction, type V2Prediction } from './result.ts';
import { newMessageId, parseWebhookSecret } from './signing.ts';
import { checkWebhookTarget, parseAllowedHosts, type WebhookTargetPolicy } from './webhook-target.ts';

/** The settings jobs read. */
export type JobsConfig = Pick<
  Config,
  | 'WEBHOOK_SECRET'
  | 'WEBHOOK_ALLOWED_HOSTS'
  | 'WEBHOOK_ALLOW_HTTP'
  | 'WEBHOOK_RETRY_BASE_MS'
  | 'WEBHOOK_MAX_ATTEMPTS'
  | 'WEBHOOK_MAX_RETRY_MS'
  | 'WEBHOOK_TIMEOUT_MS'
  | 'JOB_MAX_ITEMS'
  | 'JOB_MAX_QUEUED_PER_KEY'
  | 'JOB_MAX_QUEUED_CHARS'
  | 'JOB_RESULT_TTL_MS'
>;

/** The subset of pino's (and fastify's) logger jobs use. */
export interface JobsLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface JobsDeps {
  config: JobsConfig;
  scorer: Pick<Scorer, 'score' | 'ready'>;
  registry: Registry;
  logger: JobsLogger;
  /** Conversations scored at once for jobs, all jobs together; the rest of the pool stays free for live traffic. */
  concurrency?: number;
  /**
   * Most results kept by finished jobs, all keys together (default 100,000, some tens of MB). Past it
   * the oldest finished job is forgotten before its TTL, so memory stays bounded whatever the traffic.
   */
  maxRetainedResults?: number;
  /** Called once per scored conversation (metrics, audit line); jobs keep neither text nor preview. */
  onPrediction?: (request: ScoreRequest, prediction: Prediction, latencyMs: number) => void;
}

export type JobStatus = 'queued' | 'running' | 'done' | 'failed';
export type WebhookStatus = 'pending' | 'delivered' | 'failed';

export interface JobItem {
  id: string;
  request: ScoreRequest;
}

export interface SubmitInput {
  keyId: string;
  items: JobItem[];
  webhookUrl?: string | undefined;
  /** Idempotency-Key header with a fingerprint of the body it came with. */
  idempotency?: { key: string; fingerprint: string } | undefined;
}

export interface JobView {
  job_id: string;
  status: JobStatus;
  progress: { done: number; total: number };
  created_at: string;
  started_at?: string;
  completed_at?: string;
  expires_at?: string;
  results?: Record<string, V2Prediction>;
  error?: string;
  webhook?: { status: WebhookStatus; attempts: number; last_error?: string };
}

export type RejectReason =
  | 'shutting_down'
  | 'model_unavailable'
  | 'too_many_items'
  | 'too_large'
  | 'per_key_limit'
  | 'queue_full'
  | 'invalid_webhook'
  | 'idempotency_mismatch';

export type SubmitResult =
  | { ok: true; job: JobView; replayed: boolean }
  | { ok: false; reason: RejectReason; detail: string };

interface Job {
  id: string;
  keyId: string;
  status: JobStatus;
  createdAt: number;
  startedAt?: number;
  completedAt?: number;
  expiresAt?: number;
  ids: string[];
  /** Pending requests; an entry is cleared as soon as it is scored, so text leaves memory early. */
  pending: Array<ScoreRequest | undefined>;
  results: Map<string, V2Prediction>;
  next: number;
  done: number;
  inFlight: number;
  error?: string;
  webhook?: { url: URL; status: WebhookStatus; attempts: number; lastError?: string };
  idempotency?: { key: string; fingerprint: string };
}

const OVERLOAD_BASE_MS = 25;
const OVERLOAD_CAP_MS = 1000;
const TIMEOUT_RETRIES = 2;
/** Floor of the Retry-After on limit answers, in seconds. */
export const JOB_RETRY_AFTER_S = 5;

const SHUTDOWN_ERROR = 'The service shut down before the job finished; resubmit it';

const iso = (ms: number) => new Date(ms).toISOString();

export class Jobs {
  readonly #config: JobsConfig;
  readonly #scorer: Pick<Scorer, 'score' | 'ready'>;
  readonly #logger: JobsLogger;
  readonly #metrics: JobMetrics;
  readonly #concurrency: number;
  readonly #onPrediction: JobsDeps['onPrediction'];
  readonly #target: WebhookTargetPolicy;
  readonly #delivery: DeliveryPolicy | undefined;

  readonly #jobs = new Map<string, Job>();
  readonly #idempotent = new Map<string, string>();
  /** Runnable jobs (items left to start) per key, FIFO within a key; keys are served round-robin. */
  readonly #runnable = new Map<string, Job[]>();
  readonly #unfinishedByKey = new Map<string, number>();
  readonly #deliveries = new Set<Promise<void>>();
  readonly #expiryTimers = new Set<NodeJS.Timeout>();
  /** Finished jobs in completion order, oldest first: the eviction order past maxRetainedResults. */
  readonly #finished = new Set<Job>();
  readonly #maxRetainedResults: number;
  #retainedResults = 0;
  /** Aborted at the shutdown deadline: withdraws queued scoring and pending webhook retries. */
  readonly #stop = new AbortController();
  #idleWaiters: Array<() => void> = [];
  #accepting = true;
  #active = 0;
  #queuedChars = 0;
  #pendingItems = 0;
  #unfinished = 0;

  constructor(deps: JobsDeps) {
    const c = deps.config;
    this.#config = c;
    this.#scorer = deps.scorer;
    this.#logger = deps.logger;
    this.#concurrency = Math.max(1, deps.concurrency ?? 2);
    this.#onPrediction = deps.onPrediction;
    this.#maxRetainedResults = deps.maxRetainedResults ?? 100_000;
    this.#target = { allowedHosts: parseAllowedHosts(c.WEBHOOK_ALLOWED_HOSTS), allowHttp: c.WEBHOOK_ALLOW_HTTP };
    this.#delivery =
      c.WEBHOOK_SECRET === undefined
        ? undefined
        : {
            key: parseWebhookSecret(c.WEBHOOK_SECRET),
            timeoutMs: c.WEBHOOK_TIMEOUT_MS,
            retryBaseMs: c.WEBHOOK_RETRY_BASE_MS,
            maxAttempts: c.WEBHOOK_MAX_ATTEMPTS,
            maxRetryMs: c.WEBHOOK_MAX_RETRY_MS,
          };
    this.#metrics = createJobMetrics(deps.registry, {
      unfinishedJobs: () => this.#unfinished,
      pendingItems: () => this.#pendingItems,
    });
    // At the shutdown deadline, jobs with nothing in flight will never be picked again: end them now.
    this.#stop.signal.addEventListener('abort', () => {
      for (const job of [...this.#runnable.values()].flat()) {
        this.#fail(job, SHUTDOWN_ERROR);
        this.#settle(job);
      }
    });
  }

  get accepting(): boolean {
    return this.#accepting;
  }

  /** Admits a job or says which rule refused it. The caller has validated shapes and ages. */
  submit(input: SubmitInput): SubmitResult {
    const replay = this.#replay(input);
    if (replay !== undefined) return replay;
    const reject = (reason: RejectReason, detail: string): SubmitResult => {
      this.#metrics.jobStatus('rejected');
      return { ok: false, reason, detail };
    };
    if (!this.#accepting) return reject('shutting_down', 'The service is shutting down and accepts no new jobs; resubmit shortly');
    if (!this.#scorer.ready) return reject('model_unavailable', 'Model is not loaded; the service is degraded');
    const c = this.#config;
    if (input.items.length > c.JOB_MAX_ITEMS) {
      return reject('too_many_items', `conversations: must hold at most ${c.JOB_MAX_ITEMS} items (JOB_MAX_ITEMS)`);
    }
    let webhook: Job['webhook'];
    if (input.webhookUrl !== undefined) {
      if (this.#delivery === undefined) {
        return reject('invalid_webhook', 'webhook_url: webhooks are disabled because WEBHOOK_SECRET is not configured (they could not be signed)');
      }
      const check = checkWebhookTarget(input.webhookUrl, this.#target);
      if (!check.ok) return reject('invalid_webhook', check.detail);
      webhook = { url: check.url, status: 'pending', attempts: 0 };
    }
    const chars = input.items.reduce((sum, item) => sum + item.request.conversation.length, 0);
    if (chars > c.JOB_MAX_QUEUED_CHARS) {
      return reject('too_large', `The job holds ${chars} characters, more than JOB_MAX_QUEUED_CHARS (${c.JOB_MAX_QUEUED_CHARS}); split it`);
    }
    if ((this.#unfinishedByKey.get(input.keyId) ?? 0) >= c.JOB_MAX_QUEUED_PER_KEY) {
      return reject('per_key_limit', `This API key already has ${c.JOB_MAX_QUEUED_PER_KEY} unfinished jobs (JOB_MAX_QUEUED_PER_KEY); retry when one finishes`);
    }
    if (this.#queuedChars + chars > c.JOB_MAX_QUEUED_CHARS) {
      return reject('queue_full', 'The job queue is full (JOB_MAX_QUEUED_CHARS); retry later');
    }

    const now = Date.now();
    const job: Job = {
      id: randomUUID(),
      keyId: input.keyId,
      status: 'queued',
      createdAt: now,
      ids: input.items.map((i) => i.id),
      pending: input.items.map((i) => i.request),
      results: new Map(),
      next: 0,
      done: 0,
      inFlight: 0,
      ...(webhook === undefined ? {} : { webhook }),
      ...(input.idempotency === undefined ? {} : { idempotency: input.idempotency }),
    };
    this.#jobs.set(job.id, job);
    if (input.idempotency !== undefined) this.#idempotent.set(this.#idemKey(input.keyId, input.idempotency.key), job.id);
    this.#queuedChars += chars;
    this.#pendingItems += job.ids.length;
    this.#unfinished++;
    this.#unfinishedByKey.set(job.keyId, (this.#unfinishedByKey.get(job.keyId) ?? 0) + 1);
    const queue = this.#runnable.get(job.keyId);
    if (queue === undefined) this.#runnable.set(job.keyId, [job]);
    else queue.push(job);
    this.#metrics.jobStatus('queued');
    this.#logger.info({ job_id: job.id, items: job.ids.length, webhook: webhook !== undefined }, 'job queued');
    // The answer describes the job as accepted (queued), before the runner may pick it up.
    const view = this.#view(job);
    this.#pump();
    return { ok: true, job: view, replayed: false };
  }

  /** The job as its owner sees it; undefined for unknown, expired or another key's job. */
  get(keyId: string, jobId: string): JobView | undefined {
    const job = this.#jobs.get(jobId);
    if (job === undefined || job.keyId !== keyId) return undefined;
    if (job.expiresAt !== undefined && Date.now() >= job.expiresAt) {
      this.#expire(job);
      return undefined;
    }
    return this.#view(job);
  }

  /** Refuses new jobs from now on (503); running ones continue. */
  stopAccepting(): void {
    this.#accepting = false;
  }

  /**
   * Shutdown: refuse new jobs, let accepted ones finish and their webhooks be delivered, for at most
   * `withinMs`. At the deadline, scoring still queued is withdrawn (those jobs end `failed`) and webhook
   * retries stop. Resolves when nothing is left running.
   */
  async drain(withinMs: number): Promise<void> {
    this.stopAccepting();
    const deadline = setTimeout(() => this.#stop.abort(new Error('shutdown deadline')), Math.max(0, withinMs));
    try {
      await this.#idle();
    } finally {
      clearTimeout(deadline);
      this.#stop.abort(new Error('drained'));
      for (const t of this.#expiryTimers) clearTimeout(t);
      this.#expiryTimers.clear();
    }
  }

  #idemKey(keyId: string, key: string): string {
    return `${keyId}\u0000${key}`;
  }

  #replay(input: SubmitInput): SubmitResult | undefined {
    if (input.idempotency === undefined) return undefined;
    const jobId = this.#idempotent.get(this.#idemKey(input.keyId, input.idempotency.key));
    const job = jobId === undefined ? undefined : this.#jobs.get(jobId);
    if (job === undefined) return undefined;
    if (job.idempotency?.fingerprint !== input.idempotency.fingerprint) {
      return { ok: false, reason: 'idempotency_mismatch', detail: 'Idempotency-Key was already used with a different request body' };
    }
    return { ok: true, job: this.#view(job), replayed: true };
  }

  #view(job: Job): JobView {
    const view: JobView = {
      job_id: job.id,
      status: job.status,
      progress: { done: job.done, total: job.ids.length },
      created_at: iso(job.createdAt),
    };
    if (job.startedAt !== undefined) view.started_at = iso(job.startedAt);
    if (job.completedAt !== undefined) view.completed_at = iso(job.completedAt);
    if (job.expiresAt !== undefined) view.expires_at = iso(job.expiresAt);
    if (job.status === 'done' || job.status === 'failed') view.results = this.#results(job);
    if (job.error !== undefined) view.error = job.error;
    if (job.webhook !== undefined) {
      const { status, attempts, lastError } = job.webhook;
      view.webhook = { status, attempts, ...(lastError === undefined ? {} : { last_error: lastError }) };
    }
    return view;
  }

  /** Results in input order; fromEntries defines own properties, so an id like `__proto__` is safe. */
  #results(job: Job): Record<string, V2Prediction> {
    const entries: Array<[string, V2Prediction]> = [];
    for (const id of job.ids) {
      const r = job.results.get(id);
      if (r !== undefined) entries.push([id, r]);
    }
    return Object.fromEntries(entries);
  }

  /** Next job to take an item from: round-robin over keys, so one key's big jobs cannot starve another's. */
  #pick(): Job | undefined {
    const entry = this.#runnable.entries().next();
    if (entry.done) return undefined;
    const [keyId, queue] = entry.value;
    const job = queue[0] as Job;
    // Move this key to the back of the rotation.
    this.#runnable.delete(keyId);
    if (job.next + 1 >= job.pending.length) queue.shift();
    if (queue.length > 0) this.#runnable.set(keyId, queue);
    return job;
  }

  #pump(): void {
    while (this.#active < this.#concurrency && !this.#stop.signal.aborted) {
      const job = this.#pick();
      if (job === undefined) return;
      const index = job.next++;
      if (job.status === 'queued') {
        job.status = 'running';
        job.startedAt = Date.now();
      }
      this.#active++;
      job.inFlight++;
      void this.#runItem(job, index).finally(() => {
        this.#active--;
        job.inFlight--;
        this.#settle(job);
        this.#pump();
      });
    }
  }

  async #runItem(job: Job, index: number): Promise<void> {
    const request = job.pending[index];
    if (request === undefined || job.status !== 'running') return;
    const signal = this.#stop.signal;
    let timeouts = 0;
    try {
      for (let retry = 0; ; retry++) {
        const t0 = performance.now();
        try {
          const [prediction] = await this.#scorer.score([request], { signal });
          if (prediction === undefined) throw new ScoringError('internal', 'scorer returned no prediction');
          this.#onPrediction?.(request, prediction, Math.round(performance.now() - t0));
          if (job.status === 'running') {
            job.results.set(job.ids[index] as string, toV2Prediction(prediction));
            job.done++;
          }
          return;
        } catch (err) {
          if (signal.aborted) return this.#fail(job, SHUTDOWN_ERROR);
          const kind = err instanceof ScoringError ? err.kind : 'internal';
          // Live traffic has priority: a full scorer queue means wait and try again, never fail the job.
          if (kind === 'overloaded' || (kind === 'timeout' && ++timeouts <= TIMEOUT_RETRIES)) {
            await sleep(fullJitter(OVERLOAD_BASE_MS, retry, OVERLOAD_CAP_MS) + OVERLOAD_BASE_MS, signal).catch(() => undefined);
            continue;
          }
          const detail =
            kind === 'model_unavailable'
              ? 'The model became unavailable while the job ran'
              : kind === 'timeout'
                ? `Scoring conversation ${JSON.stringify(job.ids[index])} timed out repeatedly`
                : `Scoring conversation ${JSON.stringify(job.ids[index])} failed unexpectedly`;
          return this.#fail(job, detail);
        }
      }
    } finally {
      this.#release(job, index);
    }
  }

  #release(job: Job, index: number): void {
    const request = job.pending[index];
    if (request === undefined) return;
    job.pending[index] = undefined;
    this.#queuedChars -= request.conversation.length;
    this.#pendingItems--;
  }

  #fail(job: Job, error: string): void {
    if (job.status !== 'running' && job.status !== 'queued') return;
    job.status = 'failed';
    job.error = error;
    // Items not yet started will never run: free their text and budget now.
    const queue = this.#runnable.get(job.keyId);
    if (queue !== undefined) {
      const rest = queue.filter((j) => j !== job);
      if (rest.length > 0) this.#runnable.set(job.keyId, rest);
      else this.#runnable.delete(job.keyId);
    }
    for (let i = job.next; i < job.pending.length; i++) this.#release(job, i);
    job.next = job.pending.length;
  }

  /** Finishes a job once its last item is back (done) or once nothing of a failed job is in flight. */
  #settle(job: Job): void {
    if (job.completedAt !== undefined || job.inFlight > 0) return;
    if (job.status === 'running' && job.done < job.ids.length) return;
    if (job.status === 'running') job.status = 'done';
    const now = Date.now();
    job.completedAt = now;
    job.expiresAt = now + this.#config.JOB_RESULT_TTL_MS;
    this.#unfinished--;
    const left = (this.#unfinishedByKey.get(job.keyId) ?? 1) - 1;
    if (left > 0) this.#unfinishedByKey.set(job.keyId, left);
    else this.#unfinishedByKey.delete(job.keyId);
    this.#metrics.jobStatus(job.status === 'done' ? 'done' : 'failed');
    this.#logger.info(
      { job_id: job.id, status: job.status, items: job.ids.length, scored: job.done, ms: now - (job.startedAt ?? job.createdAt) },
      'job finished',
    );
    const timer = setTimeout(() => {
      this.#expiryTimers.delete(timer);
      this.#expire(job);
    }, this.#config.JOB_RESULT_TTL_MS);
    timer.unref();
    this.#expiryTimers.add(timer);
    if (job.webhook !== undefined) this.#notify(job);
    this.#retain(job);
    this.#checkIdle();
  }

  #retain(job: Job): void {
    this.#finished.add(job);
    this.#retainedResults += job.results.size;
    for (const oldest of this.#finished) {
      if (this.#retainedResults <= this.#maxRetainedResults || oldest === job) break;
      this.#logger.warn({ job_id: oldest.id }, 'finished job forgotten before its TTL: retained results at their limit');
      this.#expire(oldest);
    }
  }

  #expire(job: Job): void {
    if (this.#finished.delete(job)) this.#retainedResults -= job.results.size;
    this.#jobs.delete(job.id);
    if (job.idempotency !== undefined) this.#idempotent.delete(this.#idemKey(job.keyId, job.idempotency.key));
    job.results.clear();
  }

  #notify(job: Job): void {
    const webhook = job.webhook;
    if (webhook === undefined || this.#delivery === undefined) return;
    const body = JSON.stringify({
      type: job.status === 'done' ? 'batch.completed' : 'batch.failed',
      timestamp: iso(job.completedAt ?? Date.now()),
      data: {
        job_id: job.id,
        status: job.status,
        progress: { done: job.done, total: job.ids.length },
        results: this.#results(job),
        ...(job.error === undefined ? {} : { error: job.error }),
      },
    });
    const message = { id: newMessageId(), body };
    const delivery = deliverWebhook(webhook.url, message, this.#delivery, {
      signal: this.#stop.signal,
      metrics: this.#metrics,
      onAttempt: (n) => {
        webhook.attempts = n;
      },
    }).then((result) => {
      webhook.status = result.delivered ? 'delivered' : 'failed';
      webhook.attempts = result.attempts;
      if (result.lastError !== undefined && !result.delivered) webhook.lastError = result.lastError;
      this.#metrics.delivery(result.delivered ? 'delivered' : 'failed');
      // The host only: a URL's path or query may carry the receiver's own tokens.
      const log = { job_id: job.id, webhook_id: message.id, host: webhook.url.host, attempts: result.attempts };
      if (result.delivered) this.#logger.info(log, 'webhook delivered');
      else this.#logger.warn({ ...log, error: result.lastError }, 'webhook delivery failed');
    });
    this.#deliveries.add(delivery);
    void delivery.finally(() => {
      this.#deliveries.delete(delivery);
      this.#checkIdle();
    });
  }

  #checkIdle(): void {
    if (this.#unfinished > 0 || this.#deliveries.size > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }

  #idle(): Promise<void> {
    return new Promise((resolve) => {
      this.#idleWaiters.push(resolve);
      this.#checkIdle();
    });
  }
}

export function createJobs(deps: JobsDeps): Jobs {
  return new Jobs(deps);
}
