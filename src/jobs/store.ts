// Job state: records, results, idempotency keys and the counters the limits read. One interface, two
// implementations: in memory (memory/store.ts, a single process) and in Redis (redis/store.ts, shared
// by replicas). Neither ever holds conversation text: items travel through the scheduler, results
// are scores.
import type { ItemResult } from './types.ts';
import type { JobStatus, WebhookStatus } from './types.ts';

export interface JobRecord {
  id: string;
  keyId: string;
  status: JobStatus;
  createdAt: number;
  startedAt?: number;
  completedAt?: number;
  expiresAt?: number;
  /** The caller's conversation ids, in input order. */
  ids: string[];
  /** Items scored. */
  done: number;
  error?: string;
  webhook?: {
    /** As accepted at submit time; '' when a shared store cannot open it (REDIS_ENCRYPTION_KEY_FILE differs). */
    url: string;
    status: WebhookStatus;
    attempts: number;
    /** When the first delivery attempt began, on whichever replica made it: WEBHOOK_MAX_RETRY_MS counts from it. Set once. */
    firstAttemptAt?: number;
    lastError?: string;
  };
  idempotency?: { key: string; fingerprint: string };
}

export type Reservation = 'ok' | 'per_key_limit' | 'queue_full';

/** What a submission holds against the limits from reserve until its job is queued (commit) or given up (abandon). */
export interface Lease {
  /** The job's id, chosen before it is reserved. */
  jobId: string;
  keyId: string;
  chars: number;
  items: number;
  /** The caller's Idempotency-Key, whose claim goes with the job if the submission is given up. */
  idempotencyKey?: string;
}

export interface JobLimits {
  perKey: number;
  maxChars: number;
}

export interface JobStore {
  /**
   * Counts a new job against the per-key and the global limit, atomically, or names the one that
   * refuses it. The counts are held under the lease until `commit` or `abandon`. A shared store gives
   * back a lease that neither reached within its lease time (its replica died mid-submission, or a
   * write was carried out but its answer lost), before it counts the next reservation.
   */
  reserve(lease: Lease, limits: JobLimits): Promise<Reservation>;
  /**
   * Stores the lease's job. With an Idempotency-Key, the key is claimed atomically first: when another
   * submission (here or on another replica) holds it, nothing is stored and that job's id returned.
   * Throws JobsUnavailableError when the lease was given back (lapsed): nothing is stored then.
   */
  create(record: JobRecord): Promise<{ created: true } | { created: false; existingJobId: string }>;
  /**
   * The job's items are queued: from now on the job holds its counts until its items finish and it
   * completes. False when the lease had already been given back (the job is gone: answer 503).
   */
  commit(jobId: string): Promise<boolean>;
  /**
   * Gives a submission up: frees its lease's counts and deletes its job and Idempotency-Key claim, if
   * stored. Does nothing to a committed job, and nothing the second time. A job whose items already
   * run (a shared queue took them before the submission failed) is committed instead and runs on.
   */
  abandon(jobId: string): Promise<void>;
  get(jobId: string): Promise<JobRecord | undefined>;
  /** Results keyed by conversation id, in input order. */
  results(record: JobRecord): Promise<Record<string, ItemResult>>;
  findIdempotent(keyId: string, key: string): Promise<string | undefined>;
  /** queued -> running when its first item starts. */
  markStarted(jobId: string, at: number): Promise<void>;
  addResult(jobId: string, conversationId: string, result: ItemResult): Promise<void>;
  /** Sets `failed` with `error` unless the job already ended or failed; true when this call failed it. */
  fail(jobId: string, error: string): Promise<boolean>;
  /**
   * Item `index` is accounted for (scored, failed or skipped): frees its budget; returns how many are.
   * Counted once per index however often it is reported (a shared queue may run an item twice). An
   * item of a job that no longer exists (expired, or abandoned after its items were queued) frees
   * nothing: its budget went with the job.
   */
  itemFinished(jobId: string, chars: number, index: number): Promise<number>;
  /**
   * Ends the job once (done unless failed): stamps completion and expiry, frees the key's slot. Returns
   * the record when this call ended it, undefined when it had already ended (another replica did).
   */
  complete(jobId: string, at: number, ttlMs: number): Promise<JobRecord | undefined>;
  /** Records a delivery's progress or end; changes nothing once the webhook is delivered (that is final). */
  updateWebhook(jobId: string, patch: Partial<NonNullable<JobRecord['webhook']>>): Promise<void>;
  /**
   * Ends a pending webhook as failed, with why. False, changing nothing, when it is not pending any more
   * (a replica whose lock had lapsed may still have delivered it) or its job is gone. `attempts`: those
   * the queue knows were made; the count only goes up, as updateWebhook's.
   */
  failPendingWebhook(jobId: string, lastError: string, attempts?: number): Promise<boolean>;
  /** For the gauges. */
  counts(): Promise<{ unfinishedJobs: number; pendingItems: number }>;
  close(): Promise<void>;
}
