// The jobs' public shapes: what the v2 routes hand in and get back, and the Jobs interface both
// implementations (in memory; shared through Redis) satisfy. A leaf: it imports types only.
import type { CodedError } from '../error-catalogue.ts';
import type { ObservedAnswer } from '../ops/observed-scoring.ts';
import type { ScoreRequest } from '../scoring/types.ts';

/**
 * What a finished job keeps of one conversation, as the HTTP layer shaped it (http/answers.ts
 * toV2Prediction: scores only, never text). Opaque to jobs: stored, returned and posted as it is.
 */
export type ItemResult = ObservedAnswer & { readonly [field: string]: unknown };

/**
 * The settings jobs read: their own shape, so jobs never import the service's configuration (the
 * service's Config, src/config.ts, extends it and is what the v2 routes pass).
 */
export interface JobsConfig {
  /** The decoded HMAC key of WEBHOOK_SECRET; undefined when it is not configured (webhooks are refused). */
  WEBHOOK_SIGNING_KEY: Buffer | undefined;
  /** Normalised `host:port` entries a webhook_url may name (lower case, IDN and IPv6 as URLs normalise them). */
  WEBHOOK_ALLOWED_HOSTS: readonly string[];
  WEBHOOK_ALLOW_HTTP: boolean;
  WEBHOOK_RETRY_BASE_MS: number;
  WEBHOOK_MAX_ATTEMPTS: number;
  WEBHOOK_MAX_RETRY_MS: number;
  WEBHOOK_TIMEOUT_MS: number;
  JOB_MAX_ITEMS: number;
  JOB_MAX_QUEUED_PER_KEY: number;
  JOB_MAX_QUEUED_CHARS: number;
  JOB_RESULT_TTL_MS: number;
}

/** The subset of pino's (and fastify's) logger jobs use. */
export interface JobsLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
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
  results?: Record<string, ItemResult>;
  error?: string;
  webhook?: { status: WebhookStatus; attempts: number; last_error?: string };
}

export type SubmitResult =
  | { ok: true; job: JobView; replayed: boolean }
  | { ok: false; error: CodedError };


/** The shared job state (Redis) could not be reached: the route answers 503 with Retry-After. */
export class JobsUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JobsUnavailableError';
  }
}

export interface Jobs {
  /** False once shutdown began: submissions get 503. */
  readonly accepting: boolean;
  /** Admits a job or says which rule refused it. The caller has validated shapes and ages. */
  submit(input: SubmitInput): Promise<SubmitResult>;
  /** The job as its owner sees it; undefined for unknown, expired or another key's job. */
  get(keyId: string, jobId: string): Promise<JobView | undefined>;
  /** Refuses new jobs from now on (503); running ones continue. */
  stopAccepting(): void;
  /** Shutdown: let accepted work finish for at most `withinMs`, then stop. */
  drain(withinMs: number): Promise<void>;
}
