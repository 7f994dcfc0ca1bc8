// Job state in this process's memory: the JobStore (store.ts) of a single process. It never holds
// conversation text: items travel through the scheduler, results are scores.
import type { ItemResult } from '../types.ts';
import type { JobLimits, JobRecord, JobStore, Lease, Reservation } from '../store.ts';
import { JobsUnavailableError } from '../types.ts';

interface MemoryJob {
  record: JobRecord;
  results: Map<string, ItemResult>;
  /** Item indices accounted for. */
  finished: Set<number>;
  /** Forgets the job at its TTL; cleared when it is forgotten sooner (retention), so it cannot fire later. Set on a finished job only. */
  expiry?: NodeJS.Timeout;
}

/** A webhook's attempts only ever go up, as RedisJobStore keeps them: a replica whose lock lapsed cannot write an older count back. */
function raiseAttempts(webhook: NonNullable<JobRecord['webhook']>, attempts: number | undefined): void {
  if (attempts !== undefined) webhook.attempts = Math.max(webhook.attempts, attempts);
}

/**
 * Everything in this process's memory. Finished jobs are forgotten after their TTL, and sooner once
 * more than `maxRetainedResults` results are kept (oldest job first), so memory stays bounded.
 */
export class MemoryJobStore implements JobStore {
  readonly #jobs = new Map<string, MemoryJob>();
  readonly #idempotent = new Map<string, string>();
  readonly #unfinishedByKey = new Map<string, number>();
  readonly #leases = new Map<string, Lease>();
  /** Finished jobs in completion order: the eviction order past maxRetainedResults. */
  readonly #finished = new Set<MemoryJob>();
  readonly #maxRetainedResults: number;
  readonly #onEvict: (jobId: string) => void;
  #retained = 0;
  #queuedChars = 0;
  #pendingItems = 0;
  #unfinished = 0;

  constructor(options: { maxRetainedResults?: number; onEvict?: (jobId: string) => void } = {}) {
    this.#maxRetainedResults = options.maxRetainedResults ?? 100_000;
    this.#onEvict = options.onEvict ?? (() => {});
  }

  // A lease here never lapses: a process that dies mid-submission takes every count with it.
  async reserve(lease: Lease, limits: JobLimits): Promise<Reservation> {
    const { keyId, chars, items } = lease;
    if ((this.#unfinishedByKey.get(keyId) ?? 0) >= limits.perKey) return 'per_key_limit';
    if (this.#queuedChars + chars > limits.maxChars) return 'queue_full';
    this.#unfinishedByKey.set(keyId, (this.#unfinishedByKey.get(keyId) ?? 0) + 1);
    this.#queuedChars += chars;
    this.#pendingItems += items;
    this.#unfinished++;
    this.#leases.set(lease.jobId, lease);
    return 'ok';
  }

  async commit(jobId: string): Promise<boolean> {
    return this.#leases.delete(jobId);
  }

  async abandon(jobId: string): Promise<void> {
    const lease = this.#leases.get(jobId);
    if (lease === undefined) return;
    this.#leases.delete(jobId);
    const job = this.#jobs.get(jobId);
    if (job !== undefined && (job.record.status !== 'queued' || job.finished.size > 0)) return;
    this.#releaseKey(lease.keyId);
    this.#queuedChars -= lease.chars;
    this.#pendingItems -= lease.items;
    this.#unfinished--;
    this.#jobs.delete(jobId);
    if (lease.idempotencyKey !== undefined) {
      const key = idemKey(lease.keyId, lease.idempotencyKey);
      if (this.#idempotent.get(key) === jobId) this.#idempotent.delete(key);
    }
  }

  async create(record: JobRecord): Promise<{ created: true } | { created: false; existingJobId: string }> {
    if (!this.#leases.has(record.id)) throw new JobsUnavailableError(`job ${record.id} has no reservation`);
    if (record.idempotency !== undefined) {
      const key = idemKey(record.keyId, record.idempotency.key);
      const existing = this.#idempotent.get(key);
      if (existing !== undefined) return { created: false, existingJobId: existing };
      this.#idempotent.set(key, record.id);
    }
    this.#jobs.set(record.id, { record, results: new Map(), finished: new Set() });
    return { created: true };
  }

  async get(jobId: string): Promise<JobRecord | undefined> {
    const job = this.#jobs.get(jobId);
    if (job === undefined) return undefined;
    if (job.record.expiresAt !== undefined && Date.now() >= job.record.expiresAt) {
      this.#expire(job);
      return undefined;
    }
    return job.record;
  }

  async results(record: JobRecord): Promise<Record<string, ItemResult>> {
    const results = this.#jobs.get(record.id)?.results;
    const entries: Array<[string, ItemResult]> = [];
    for (const id of record.ids) {
      const r = results?.get(id);
      if (r !== undefined) entries.push([id, r]);
    }
    // fromEntries defines own properties, so an id like `__proto__` is safe.
    return Object.fromEntries(entries);
  }

  async findIdempotent(keyId: string, key: string): Promise<string | undefined> {
    return this.#idempotent.get(idemKey(keyId, key));
  }

  async markStarted(jobId: string, at: number): Promise<void> {
    const record = this.#jobs.get(jobId)?.record;
    if (record?.status !== 'queued') return;
    record.status = 'running';
    record.startedAt = at;
  }

  async addResult(jobId: string, conversationId: string, result: ItemResult): Promise<void> {
    const job = this.#jobs.get(jobId);
    if (job === undefined || job.record.status !== 'running') return;
    if (!job.results.has(conversationId)) job.record.done++;
    job.results.set(conversationId, result);
  }

  async fail(jobId: string, error: string): Promise<boolean> {
    const record = this.#jobs.get(jobId)?.record;
    if (record === undefined || (record.status !== 'queued' && record.status !== 'running')) return false;
    record.status = 'failed';
    record.error = error;
    return true;
  }

  async itemFinished(jobId: string, chars: number, index: number): Promise<number> {
    const job = this.#jobs.get(jobId);
    if (job === undefined) return 0;
    if (job.finished.has(index)) return job.finished.size;
    this.#queuedChars -= chars;
    this.#pendingItems--;
    job.finished.add(index);
    return job.finished.size;
  }

  async complete(jobId: string, at: number, ttlMs: number): Promise<JobRecord | undefined> {
    const job = this.#jobs.get(jobId);
    if (job === undefined || job.record.completedAt !== undefined) return undefined;
    const record = job.record;
    if (record.status !== 'failed') record.status = 'done';
    record.completedAt = at;
    record.expiresAt = at + ttlMs;
    this.#unfinished--;
    this.#releaseKey(record.keyId);
    job.expiry = setTimeout(() => this.#expire(job), ttlMs);
    job.expiry.unref();
    this.#retain(job);
    return record;
  }

  async updateWebhook(jobId: string, patch: Partial<NonNullable<JobRecord['webhook']>>): Promise<void> {
    const webhook = this.#jobs.get(jobId)?.record.webhook;
    if (webhook === undefined || webhook.status === 'delivered') return;
    // Kept once set, as RedisJobStore keeps it: the retry budget runs from the very first attempt.
    const { firstAttemptAt, attempts, ...rest } = patch;
    Object.assign(webhook, rest);
    raiseAttempts(webhook, attempts);
    if (firstAttemptAt !== undefined) webhook.firstAttemptAt ??= firstAttemptAt;
  }

  async failPendingWebhook(jobId: string, lastError: string, attempts?: number): Promise<boolean> {
    const webhook = this.#jobs.get(jobId)?.record.webhook;
    if (webhook?.status !== 'pending') return false;
    Object.assign(webhook, { status: 'failed', lastError });
    raiseAttempts(webhook, attempts);
    return true;
  }

  async counts(): Promise<{ unfinishedJobs: number; pendingItems: number }> {
    return { unfinishedJobs: this.#unfinished, pendingItems: this.#pendingItems };
  }

  async close(): Promise<void> {
    // Every job with a TTL timer is a finished one until it is forgotten (#expire clears both).
    for (const job of this.#finished) clearTimeout(job.expiry);
  }

  #releaseKey(keyId: string): void {
    const left = (this.#unfinishedByKey.get(keyId) ?? 1) - 1;
    if (left > 0) this.#unfinishedByKey.set(keyId, left);
    else this.#unfinishedByKey.delete(keyId);
  }

  #retain(job: MemoryJob): void {
    this.#finished.add(job);
    this.#retained += job.results.size;
    for (const oldest of this.#finished) {
      if (this.#retained <= this.#maxRetainedResults || oldest === job) break;
      this.#onEvict(oldest.record.id);
      this.#expire(oldest);
    }
  }

  #expire(job: MemoryJob): void {
    if (job.expiry !== undefined) {
      clearTimeout(job.expiry);
      delete job.expiry;
    }
    if (this.#finished.delete(job)) this.#retained -= job.results.size;
    if (this.#jobs.get(job.record.id) === job) this.#jobs.delete(job.record.id);
    // Only while the key still names this job: once it is forgotten, a resubmission may have claimed it.
    const idem = job.record.idempotency;
    if (idem !== undefined) {
      const key = idemKey(job.record.keyId, idem.key);
      if (this.#idempotent.get(key) === job.record.id) this.#idempotent.delete(key);
    }
    job.results.clear();
  }
}

export function idemKey(keyId: string, key: string): string {
  return `${keyId}\u0000${key}`;
}
