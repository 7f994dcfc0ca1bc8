// Asynchronous batch jobs of /v2/predict/batch: the one place that ties admission, the store, the
// scheduler and notification together. With the in-memory parts (memory/jobs.ts, the default) a job
// lives in this process only; with the Redis parts (redis/jobs.ts) any replica can take, run and
// report it.
import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import { errorText, type CodedError } from '../error-catalogue.ts';
import { describeBug } from '../ops/describe-bug.ts';
import type { ObservedScorer } from '../ops/observed-scoring.ts';
import { ScoringError, type Prediction } from '../scoring/types.ts';
import { fullJitter, sleep } from '../webhooks/backoff.ts';
import { deliverWebhook, type DeliveryPolicy } from '../webhooks/delivery.ts';
import { checkWebhookTarget, type WebhookTargetPolicy } from '../webhooks/target.ts';
import { checkSubmission, SHUTDOWN_ERROR } from './admission.ts';
import { createJobMetrics, type JobMetrics } from './metrics.ts';
import type { DeliverOutcome, DeliveryProgress, Notifier } from './notifier.ts';
import type { QueuedItem, Scheduler } from './scheduler.ts';
import type { JobRecord, JobStore, Lease } from './store.ts';
import { JobsUnavailableError, type ItemResult, type Jobs, type JobsConfig, type JobsLogger, type JobView, type SubmitInput, type SubmitResult } from './types.ts';

export type { Jobs, JobItem, JobView, JobsConfig, SubmitResult } from './types.ts';

export interface JobsDeps {
  config: JobsConfig;
  /** Scoring on the observed path (ops/observed-scoring.ts), which records metrics and the audit line. */
  scorer: Pick<ObservedScorer, 'score' | 'ready'>;
  /**
   * What a finished job keeps of a prediction (http/answers.ts toV2Prediction): jobs keep neither text
   * nor preview. `conversation` is the text the item was scored from, for indexing an explanation.
   */
  shape: (prediction: Prediction, conversation: string) => ItemResult;
  registry: Registry;
  logger: JobsLogger;
  /** Conversations scored at once for jobs in this process; the rest of the pool stays free for live traffic. */
  concurrency?: number;
  /**
   * Most results kept by finished jobs in memory, all keys together (default 100,000, some tens of MB).
   * Past it the oldest finished job is forgotten before its TTL, so memory stays bounded.
   */
  maxRetainedResults?: number;
}

/** The parts a JobService is made of; memory/jobs.ts and redis/jobs.ts pick them. */
export interface JobParts {
  store: JobStore;
  scheduler: Scheduler;
  notifier: Notifier;
}

/**
 * Share of the drain time scoring may use; the rest is kept for the webhooks of jobs that ended then,
 * so a job cut off by shutdown still reports `batch.failed` with the results scored so far.
 */
const SCORING_SHARE = 0.6;
const OVERLOAD_BASE_MS = 25;
const OVERLOAD_CAP_MS = 1000;
/** Tries again for an item whose scoring timed out or whose worker exited: a few, never forever. */
const FAULT_RETRIES = 2;

const iso = (ms: number) => new Date(ms).toISOString();

/** What randomUUID draws: lowercase, version 4. */
const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Work cut off by this replica's shutdown that a shared queue gives to another replica instead. */
class Interrupted extends Error {
  constructor() {
    super('interrupted by shutdown; left for another replica');
    this.name = 'Interrupted';
  }
}

export class JobService implements Jobs {
  readonly #config: JobsConfig;
  readonly #scorer: JobsDeps['scorer'];
  readonly #shape: JobsDeps['shape'];
  readonly #logger: JobsLogger;
  readonly #metrics: JobMetrics;
  readonly #target: WebhookTargetPolicy;
  readonly #delivery: DeliveryPolicy | undefined;
  readonly #store: JobStore;
  readonly #scheduler: Scheduler;
  readonly #notifier: Notifier;
  #accepting = true;

  constructor(deps: JobsDeps, parts: JobParts) {
    const c = deps.config;
    this.#config = c;
    this.#scorer = deps.scorer;
    this.#logger = deps.logger;
    this.#shape = deps.shape;
    this.#store = parts.store;
    this.#scheduler = parts.scheduler;
    this.#notifier = parts.notifier;
    this.#target = { allowedHosts: new Set(c.WEBHOOK_ALLOWED_HOSTS), allowHttp: c.WEBHOOK_ALLOW_HTTP };
    this.#delivery =
      c.WEBHOOK_SIGNING_KEY === undefined
        ? undefined
        : {
            key: c.WEBHOOK_SIGNING_KEY,
            timeoutMs: c.WEBHOOK_TIMEOUT_MS,
            retryBaseMs: c.WEBHOOK_RETRY_BASE_MS,
            maxAttempts: c.WEBHOOK_MAX_ATTEMPTS,
            maxRetryMs: c.WEBHOOK_MAX_RETRY_MS,
          };
    this.#metrics = createJobMetrics(deps.registry, () => this.#store.counts());
    this.#scheduler.start(
      (item, signal) => this.#runItem(item, signal),
      (item, detail) => this.#unreadable(item, detail),
    );
    this.#notifier.start(
      (jobId, messageId, signal, resume) => this.#deliver(jobId, messageId, signal, resume),
      (jobId, messageId, reason, attempts) => this.#webhookGivenUp(jobId, messageId, reason, attempts),
    );
  }

  get accepting(): boolean {
    return this.#accepting;
  }

  async submit(input: SubmitInput): Promise<SubmitResult> {
    const replay = await this.#replay(input);
    if (replay !== undefined) return replay;
    const reject = (error: CodedError): SubmitResult => {
      this.#metrics.jobStatus('rejected');
      return { ok: false, error };
    };
    const checked = checkSubmission(input, {
      accepting: this.#accepting,
      modelReady: this.#scorer.ready,
      config: this.#config,
      webhooksEnabled: this.#delivery !== undefined,
      target: this.#target,
    });
    if (!checked.ok) return reject(checked.error);
    const { chars, webhookUrl } = checked;
    const c = this.#config;
    const lease: Lease = {
      jobId: randomUUID(),
      keyId: input.keyId,
      chars,
      items: input.items.length,
      ...(input.idempotency === undefined ? {} : { idempotencyKey: input.idempotency.key }),
    };
    // A failed reservation is not given back here: its lease lapses (the shared store sweeps it).
    const reservation = await this.#store.reserve(lease, { perKey: c.JOB_MAX_QUEUED_PER_KEY, maxChars: c.JOB_MAX_QUEUED_CHARS });
    if (reservation === 'per_key_limit') return reject({ code: 'per_key_limit', params: { max: c.JOB_MAX_QUEUED_PER_KEY } });
    if (reservation === 'queue_full') return reject({ code: 'job_queue_full' });

    const record: JobRecord = {
      id: lease.jobId,
      keyId: input.keyId,
      status: 'queued',
      createdAt: Date.now(),
      ids: input.items.map((i) => i.id),
      done: 0,
      ...(webhookUrl === undefined ? {} : { webhook: { url: webhookUrl, status: 'pending' as const, attempts: 0 } }),
      ...(input.idempotency === undefined ? {} : { idempotency: input.idempotency }),
    };
    let view: JobView;
    try {
      const stored = await this.#store.create(record);
      if (!stored.created) {
        await this.#store.abandon(record.id);
        return await this.#replayWinner(input, stored.existingJobId);
      }
      // The answer describes the job as accepted (queued), before a worker may pick it up.
      view = await this.#view(record);
      await this.#enqueue(record, input);
      if (!(await this.#store.commit(record.id))) throw new JobsUnavailableError('the job was given up before it was queued; resubmit it');
    } catch (err) {
      // Never half-made in silence: the job, its claim on the Idempotency-Key and its budget go now,
      // or, if the store cannot be reached, when its lease lapses; the caller gets 503 without waiting
      // for that. Items held here are withdrawn; items a shared queue holds skip themselves (no job).
      // A job whose items already run, or whose commit Redis carried out unanswered, runs on: a retry
      // with the same Idempotency-Key finds it.
      this.#scheduler.cancel(record.id);
      void this.#store.abandon(record.id).catch(() => undefined);
      throw err;
    }
    this.#metrics.jobStatus('queued');
    this.#logger.info({ job_id: record.id, items: record.ids.length, webhook: webhookUrl !== undefined }, 'job queued');
    return { ok: true, job: view, replayed: false };
  }

  /** The same Idempotency-Key won a race (here or on another replica): answer with that job. */
  async #replayWinner(input: SubmitInput, winner: string): Promise<SubmitResult> {
    // The claim and the record are stored together, so the winner is readable unless it was given up
    // (its submission failed) or expired since; a short wait covers a give-up under way, then 503.
    for (let attempt = 0; attempt < 20; attempt++) {
      const replay = await this.#replay(input);
      if (replay !== undefined) return replay;
      await sleep(25);
    }
    throw new JobsUnavailableError(`job ${winner} holds this Idempotency-Key but cannot be read`);
  }

  async #enqueue(record: JobRecord, input: SubmitInput): Promise<void> {
    const queued: QueuedItem[] = input.items.map((item, index) => ({
      jobId: record.id,
      keyId: record.keyId,
      index,
      id: item.id,
      request: item.request,
      chars: item.request.conversation.length,
      total: input.items.length,
    }));
    try {
      await this.#scheduler.enqueue(queued);
    } catch (err) {
      throw new JobsUnavailableError('the job queue (Redis) cannot be reached', { cause: err });
    }
  }

  async get(keyId: string, jobId: string): Promise<JobView | undefined> {
    // Job ids are UUIDs (submit draws them): anything else is no job, and never reaches the store,
    // where `<id>:finished` would name another key of a real job.
    if (!JOB_ID.test(jobId)) return undefined;
    const record = await this.#store.get(jobId);
    if (record === undefined || record.keyId !== keyId) return undefined;
    return this.#view(record);
  }

  stopAccepting(): void {
    this.#accepting = false;
  }

  /**
   * Shutdown: refuse new jobs, let work running here finish and its webhooks be delivered, for at most
   * `withinMs`. After SCORING_SHARE of it, items this process still holds are withdrawn (their jobs end
   * `failed` and their webhooks go out with the results so far); at `withinMs` webhook retries stop.
   * Items in a shared queue stay there for the other replicas.
   */
  async drain(withinMs: number): Promise<void> {
    this.stopAccepting();
    const budget = Math.max(0, withinMs);
    const scoringDeadline = AbortSignal.timeout(Math.floor(budget * SCORING_SHARE));
    const deliveryDeadline = new AbortController();
    const timer = setTimeout(() => deliveryDeadline.abort(new Error('shutdown deadline')), budget);
    try {
      const withdrawn = await this.#scheduler.drain(scoringDeadline);
      for (const item of withdrawn) {
        await this.#store.fail(item.jobId, SHUTDOWN_ERROR).catch(() => false);
        await this.#finishItem(item);
      }
      await this.#notifier.drain(deliveryDeadline.signal);
    } finally {
      clearTimeout(timer);
      await this.#store.close().catch(() => undefined);
    }
  }

  async #replay(input: SubmitInput): Promise<SubmitResult | undefined> {
    if (input.idempotency === undefined) return undefined;
    const jobId = await this.#store.findIdempotent(input.keyId, input.idempotency.key);
    const record = jobId === undefined ? undefined : await this.#store.get(jobId);
    if (record === undefined || record.keyId !== input.keyId) return undefined;
    if (record.idempotency?.fingerprint !== input.idempotency.fingerprint) {
      return { ok: false, error: { code: 'idempotency_mismatch' } };
    }
    return { ok: true, job: await this.#view(record), replayed: true };
  }

  async #view(record: JobRecord): Promise<JobView> {
    const view: JobView = {
      job_id: record.id,
      status: record.status,
      progress: { done: record.done, total: record.ids.length },
      created_at: iso(record.createdAt),
    };
    if (record.startedAt !== undefined) view.started_at = iso(record.startedAt);
    if (record.completedAt !== undefined) view.completed_at = iso(record.completedAt);
    if (record.expiresAt !== undefined) view.expires_at = iso(record.expiresAt);
    if (record.status === 'done' || record.status === 'failed') view.results = await this.#store.results(record);
    if (record.error !== undefined) view.error = record.error;
    if (record.webhook !== undefined) {
      const { status, attempts, lastError } = record.webhook;
      view.webhook = { status, attempts, ...(lastError === undefined ? {} : { last_error: lastError }) };
    }
    return view;
  }

  /** Scores one item with retries on overload, records the outcome, and ends the job after its last item. */
  async #runItem(item: QueuedItem, signal: AbortSignal): Promise<void> {
    await this.#step(item, 'job item could not be recorded', async () => {
      const record = await this.#store.get(item.jobId);
      // A failed (or expired) job's remaining items are accounted for without scoring.
      if (record !== undefined && (record.status === 'queued' || record.status === 'running')) {
        await this.#store.markStarted(item.jobId, Date.now());
        await this.#score(item, signal);
      }
    });
    await this.#step(item, 'job item could not be accounted', () => this.#finishItem(item));
  }

  /** One step of an item: a failure the shared queue keeps is rethrown, any other is logged and the item goes on. */
  async #step(item: QueuedItem, failure: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      if (this.#keptInQueue(err)) throw err;
      // The error's type only, as every error log: a message could quote a conversation.
      this.#logger.warn({ job_id: item.jobId, error: describeBug(err).type }, failure);
    }
  }

  /**
   * Whether the shared queue keeps this item (rethrown) instead of it being accounted for here: work
   * cut off by shutdown, and work the shared store could not record (Redis unreachable mid-item),
   * which the queue runs again once it is back. Running an item again is safe: a result and a
   * finished item count once in the store.
   */
  #keptInQueue(err: unknown): boolean {
    return err instanceof Interrupted || (err instanceof JobsUnavailableError && this.#scheduler.requeuesInterrupted);
  }

  /** An item whose text could not be opened: its job fails (this replica cannot score it, nor can any other with the same key). */
  async #unreadable(item: QueuedItem, detail: string): Promise<void> {
    await this.#failJob(item.jobId, detail);
    await this.#finishItem(item);
  }

  async #score(item: QueuedItem, signal: AbortSignal): Promise<void> {
    let retries = 0;
    for (let retry = 0; ; retry++) {
      try {
        // Observed (metrics, the audit line) before the result is stored, so an item's audit line
        // precedes its visible result; an item that runs again is observed again, as the same item.
        const [result] = await this.#scorer.score(
          [item.request],
          { shape: (p, request) => this.#shape(p, request.conversation), job: () => ({ job_id: item.jobId, job_item: item.index }) },
          { signal },
        );
        if (result === undefined) throw new ScoringError('internal', 'scorer returned no prediction');
        await this.#store.addResult(item.jobId, item.id, result);
        return;
      } catch (err) {
        // The result was scored but not recorded: not a scoring failure, and the job must not fail for it.
        if (err instanceof JobsUnavailableError) throw err;
        if (signal.aborted) {
          if (this.#scheduler.requeuesInterrupted) throw new Interrupted();
          return this.#failJob(item.jobId, SHUTDOWN_ERROR);
        }
        const kind = err instanceof ScoringError ? err.kind : 'internal';
        // Live traffic has priority: a full scorer queue means wait and try again, never fail the job.
        // A timeout or a worker that stopped mid-item may pass on another try; a few, not forever.
        if (kind === 'overloaded' || ((kind === 'timeout' || kind === 'interrupted') && ++retries <= FAULT_RETRIES)) {
          await sleep(fullJitter(OVERLOAD_BASE_MS, retry, OVERLOAD_CAP_MS) + OVERLOAD_BASE_MS, signal).catch(() => undefined);
          continue;
        }
        const detail =
          kind === 'model_unavailable'
            ? 'The model became unavailable while the job ran'
            : kind === 'timeout' || kind === 'interrupted'
              ? `Scoring conversation ${JSON.stringify(item.id)} ${kind === 'timeout' ? 'timed out' : 'was interrupted'} repeatedly`
              : `Scoring conversation ${JSON.stringify(item.id)} failed unexpectedly`;
        return this.#failJob(item.jobId, detail);
      }
    }
  }

  async #failJob(jobId: string, error: string): Promise<void> {
    if (!(await this.#store.fail(jobId, error))) return;
    // Items not yet started will never run: free their text and budget now.
    for (const dropped of this.#scheduler.cancel(jobId)) await this.#finishItem(dropped);
  }

  async #finishItem(item: QueuedItem): Promise<void> {
    const finished = await this.#store.itemFinished(item.jobId, item.chars, item.index);
    if (finished < item.total) return;
    const ended = await this.#store.complete(item.jobId, Date.now(), this.#config.JOB_RESULT_TTL_MS);
    if (ended === undefined) {
      // Already ended. In a shared queue this may be a rerun of the item whose first run ended the
      // job and then lost the store before queueing its webhook: queue it now (once per job, by id).
      if (!this.#scheduler.requeuesInterrupted) return;
      const record = await this.#store.get(item.jobId);
      if (record?.completedAt !== undefined && record.webhook?.status === 'pending') await this.#notifier.notify(record.id);
      return;
    }
    this.#metrics.jobStatus(ended.status === 'done' ? 'done' : 'failed');
    this.#logger.info(
      {
        job_id: ended.id,
        status: ended.status,
        items: ended.ids.length,
        scored: ended.done,
        ms: (ended.completedAt ?? Date.now()) - (ended.startedAt ?? ended.createdAt),
      },
      'job finished',
    );
    if (ended.webhook !== undefined) await this.#notifier.notify(ended.id);
  }

  /** A webhook the notifier will not try again ends as failed, with why, in the job and the metrics. */
  async #webhookGivenUp(jobId: string, messageId: string, reason: string, attempts?: number): Promise<void> {
    // Not pending any more: delivered after all by a replica whose lock had lapsed, or its job expired.
    if (!(await this.#store.failPendingWebhook(jobId, reason, attempts))) return;
    this.#metrics.delivery('failed');
    this.#logger.warn({ job_id: jobId, webhook_id: messageId, error: reason }, 'webhook delivery failed');
  }

  /** Builds the job's webhook message from the store and delivers it (the notifier decides where). */
  async #deliver(jobId: string, messageId: string, signal: AbortSignal, resume?: DeliveryProgress): Promise<DeliverOutcome> {
    // A store that cannot be read is not a job that is gone: the error reaches the notifier, which
    // tries the delivery again later (a shared queue, after its backoff), rather than dropping it.
    const record = await this.#store.get(jobId);
    const webhook = record?.webhook;
    if (record === undefined || webhook === undefined) {
      // A deferred retry never outlives its job's record (below): this one's was deleted, or expired
      // while a busy queue held the retry. Nothing can be sent or recorded; say so.
      if (resume !== undefined) {
        this.#metrics.delivery('failed');
        this.#logger.warn({ job_id: jobId, webhook_id: messageId, attempts: resume.attempts, error: `${resume.lastError ?? 'failed'}; the job's record was gone at the retry` }, 'webhook delivery failed');
      }
      return;
    }
    if (this.#delivery === undefined) return;
    // Checked again rather than trusted as read back: a URL stored in the clear (by a version before
    // URLs were sealed, or by anyone else who can write to Redis) is as unchecked as a new submission's.
    const target = webhook.url === '' ? undefined : checkWebhookTarget(webhook.url, this.#target);
    if (target?.ok !== true) {
      const lastError =
        target === undefined ? 'The webhook URL could not be decrypted (REDIS_ENCRYPTION_KEY_FILE differs between replicas)' : `Not sent: ${errorText(target.error)}`;
      await this.#store.updateWebhook(jobId, { status: 'failed', lastError }).catch(() => undefined);
      this.#metrics.delivery('failed');
      this.#logger.warn({ job_id: jobId, webhook_id: messageId, attempts: webhook.attempts, error: lastError }, 'webhook delivery failed');
      return;
    }
    const body = JSON.stringify({
      type: record.status === 'done' ? 'batch.completed' : 'batch.failed',
      timestamp: iso(record.completedAt ?? Date.now()),
      data: {
        job_id: record.id,
        status: record.status,
        progress: { done: record.done, total: record.ids.length },
        results: await this.#store.results(record),
        ...(record.error === undefined ? {} : { error: record.error }),
      },
    });
    const url = target.url;
    // Taken over from a replica that stopped mid-delivery, or a deferred retry: the attempts made count
    // against the limits (the larger count, where the store recorded an attempt the queue's entry did
    // not), and the retry budget runs from the first (from completion, the earliest it can have begun,
    // for a job recorded by a version that did not store it).
    const startedAt = resume?.startedAt ?? webhook.firstAttemptAt ?? record.completedAt ?? Date.now();
    const made = Math.max(resume?.attempts ?? 0, webhook.attempts);
    const result = await deliverWebhook(url, { id: messageId, body }, this.#delivery, {
      signal,
      metrics: this.#metrics,
      onAttempt: (n, firstAttemptAt) => void this.#store.updateWebhook(jobId, { attempts: n, firstAttemptAt }).catch(() => undefined),
      ...(made > 0 ? { resumeFrom: { attempts: made, startedAt, lastError: resume?.lastError, scheduled: resume !== undefined } } : {}),
      deferRetries: this.#notifier.defersRetries,
    });
    // Cut off by this replica's shutdown: a shared queue hands the webhook to another replica.
    if (!result.delivered && signal.aborted && this.#scheduler.requeuesInterrupted) throw new Interrupted();
    if (result.retryAt !== undefined) {
      const progress: DeliveryProgress = { attempts: result.attempts, startedAt: result.startedAt, lastError: result.lastError, retryAt: result.retryAt };
      // Results are not kept past JOB_RESULT_TTL_MS for a webhook: a retry due after they expire ends
      // the delivery now, recorded while the job can still be read.
      if (record.expiresAt === undefined || result.retryAt < record.expiresAt) {
        // The queue's entry carries the progress; the store's copy is what polling shows meanwhile.
        await this.#store.updateWebhook(jobId, { attempts: result.attempts, firstAttemptAt: result.startedAt }).catch(() => undefined);
        return { retryAt: result.retryAt, progress };
      }
      result.lastError = `${result.lastError ?? 'failed'}; the job's results expire (JOB_RESULT_TTL_MS) before the next retry`;
    }
    await this.#store
      .updateWebhook(jobId, {
        status: result.delivered ? 'delivered' : 'failed',
        attempts: result.attempts,
        ...(result.lastError !== undefined && !result.delivered ? { lastError: result.lastError } : {}),
      })
      .catch(() => undefined);
    this.#metrics.delivery(result.delivered ? 'delivered' : 'failed');
    // The host only: a URL's path or query may carry the receiver's own tokens.
    const log = { job_id: jobId, webhook_id: messageId, host: url.host, attempts: result.attempts };
    if (result.delivered) this.#logger.info(log, 'webhook delivered');
    else this.#logger.warn({ ...log, error: result.lastError }, 'webhook delivery failed');
  }
}
