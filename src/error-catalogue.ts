// The one catalogue of the service's error answers, as Fastify's lib/errors.js is for Fastify: each
// error's stable machine-readable `code` (sent beside `detail`, listed in the README), its HTTP status,
// its text and, for refusals worth retrying, the seconds to wait. Texts are written here and nowhere
// else, from the parameters given, so no stack trace, body fragment or key can reach a client through
// them. A leaf: the engine, jobs and webhooks name their failures by code (typed errors), and the HTTP
// layer (http/errors.ts) turns a code into an answer in one place.

interface Entry<P> {
  readonly status: number;
  readonly text: (params: P) => string;
  /** Retry-After, in seconds, sent with the answer. */
  readonly retryAfterS?: number;
}

function def<P = void>(status: number, text: (params: P) => string, retryAfterS?: number): Entry<P> {
  return retryAfterS === undefined ? { status, text } : { status, text, retryAfterS };
}

/** Seconds a client should wait before retrying a 503 caused by load. */
export const RETRY_AFTER_BUSY_S = 1;
/** Seconds before retrying while the model is not loaded: a reload is slow. */
export const RETRY_AFTER_MODEL_S = 30;
/** Seconds a refused job (quota, full queue, shutdown) should wait before it is sent again. */
export const JOB_RETRY_AFTER_S = 5;
/** Seconds a client refused for memory (the in-flight body budget) should wait: long enough for a large batch to finish. */
export const BODY_BUDGET_RETRY_AFTER_S = 5;

/** Where a field sits in a batch, e.g. `conversations[3].`; empty for a single item. */
type Where = { where?: string };

export const ERRORS = {
  // Authentication and rate limits (http/auth.ts, http/protected.ts).
  missing_api_key: def(401, () => 'API key required (Bearer token)'),
  invalid_api_key: def(403, () => 'Invalid API key'),
  rate_limited: def<{ max: number; after: string }>(429, (p) => `Rate limit exceeded: ${p.max} requests per window; retry in ${p.after}`),

  // Framing and transport, before any route runs (http/framing.ts, http/listeners.ts, the parser).
  bad_request: def(400, () => 'Bad request'),
  malformed_url: def(400, () => 'Malformed URL: invalid percent-encoding'),
  host_required: def(400, () => 'Host header required'),
  transfer_encoding_http10: def(400, () => 'Transfer-Encoding is not allowed on HTTP/1.0: send Content-Length'),
  transfer_encoding_not_chunked: def(400, () => 'Transfer-Encoding must be chunked alone'),
  not_found: def(404, () => 'Not found'),
  method_not_allowed: def(405, () => 'Method not allowed'),
  request_timeout: def(408, () => 'Request timeout'),
  length_required: def(411, () => 'Content-Length required'),
  uri_too_long: def(414, () => 'URI too long'),
  unsupported_media_type: def(415, () => 'Unsupported media type: send application/json'),
  content_encoding_unsupported: def(415, () => 'Content-Encoding is not supported: send the body uncompressed'),
  headers_too_large: def(431, () => 'Request headers too large'),
  expectation_failed: def(417, () => 'Expect: only 100-continue is supported; send the request without it'),
  payload_too_large: def(413, () => 'Request body too large'),
  /** Not an error: the body of the plain-HTTP port's redirect (and of a trusted proxy's plain request). */
  use_https: def<{ location: string }>(308, (p) => `Use HTTPS: ${p.location}`),

  // Bodies (http/json-body.ts, http/body-budget.ts, the schemas).
  body_too_large: def<{ limit: number }>(413, (p) => `Request body exceeds the limit of ${p.limit} bytes`),
  body_over_inflight_limit: def<{ limit: number }>(413, (p) => `Request body exceeds the in-flight limit of ${p.limit} bytes`),
  body_budget_full: def(503, () => 'Too many large requests in flight; retry later', BODY_BUDGET_RETRY_AFTER_S),
  key_body_budget_full: def(503, () => "This API key's requests in flight already hold its share of the body budget; retry later", BODY_BUDGET_RETRY_AFTER_S),
  malformed_json: def(422, () => 'body: malformed JSON'),
  empty_body: def(422, () => 'body: must be a JSON object, got an empty body'),
  body_too_deep: def<{ depth: number }>(422, (p) => `body: nested deeper than ${p.depth} levels; no valid request does`),
  forbidden_key: def(422, () => 'body: a "__proto__" key, or a "constructor" key holding "prototype", is not allowed'),
  /** A schema rule broken; the text (http/validation-detail.ts) names the field and the rule, never the value. */
  invalid_field: def<{ text: string }>(422, (p) => p.text),
  invalid_age: def<Where & { field: 'age_a' | 'age_b'; maxAge: number }>(
    422,
    (p) => `${p.where ?? ''}${p.field} must be an integer age from 0 to ${p.maxAge}, a range "min-max" with min <= max, "minor" or "adult"`,
  ),
  messages_length: def<Where & { max: number; chars: number }>(
    422,
    (p) => `${p.where ?? ''}messages: text must total 1 to ${p.max} characters (got ${p.chars})`,
  ),
  mode_not_batch: def(422, () => 'mode: must be "batch" (the only mode of this Preview; streaming is not available)'),
  duplicate_id: def<Where & { id: string }>(422, (p) => `${p.where ?? ''}id: duplicate id ${JSON.stringify(p.id)}; ids must be unique within a job`),

  // Scoring (the engine's ScoringError kinds).
  model_unavailable: def(503, () => 'Model is not loaded; the service is degraded', RETRY_AFTER_MODEL_S),
  scoring_queue_full: def(503, () => 'Scoring queue is full; retry later', RETRY_AFTER_BUSY_S),
  scoring_timeout: def(503, () => 'Scoring did not finish in time; retry later', RETRY_AFTER_BUSY_S),
  scoring_interrupted: def(503, () => 'Scoring was interrupted (a scoring worker stopped and is being replaced); retry', RETRY_AFTER_BUSY_S),
  prediction_failed: def(500, () => 'Prediction failed unexpectedly'),
  /** Written nowhere (the connection is gone): what access logs and metrics show, as nginx does. */
  client_closed: def(499, () => 'Client closed the connection'),
  /** A request that arrived after shutdown began (http/closing.ts): another replica, or this one restarted, answers it. */
  service_closing: def(503, () => 'The service is shutting down; retry shortly', RETRY_AFTER_BUSY_S),
  internal_error: def(500, () => 'Internal server error'),

  // Batch jobs (/v2; the jobs' refusals and the shared store).
  job_not_found: def(404, () => 'Job not found (unknown, expired, or created by another API key)'),
  jobs_unavailable: def(503, () => 'Batch jobs are unavailable: the shared job store cannot be reached; retry shortly', RETRY_AFTER_BUSY_S),
  shutting_down: def(503, () => 'The service is shutting down and accepts no new jobs; resubmit shortly', JOB_RETRY_AFTER_S),
  too_many_items: def<{ max: number }>(422, (p) => `conversations: must hold at most ${p.max} items (JOB_MAX_ITEMS)`),
  job_too_large: def<{ chars: number; max: number }>(413, (p) => `The job holds ${p.chars} characters, more than JOB_MAX_QUEUED_CHARS (${p.max}); split it`),
  // The caller's own quota: it frees up when one of its jobs finishes.
  per_key_limit: def<{ max: number }>(
    429,
    (p) => `This API key already has ${p.max} unfinished jobs (JOB_MAX_QUEUED_PER_KEY); retry when one finishes`,
    JOB_RETRY_AFTER_S,
  ),
  // Capacity of the whole service, shared by every key: the same answer as a full scoring queue.
  job_queue_full: def(503, () => 'The job queue is full (JOB_MAX_QUEUED_CHARS); retry later', JOB_RETRY_AFTER_S),
  idempotency_mismatch: def(422, () => 'Idempotency-Key was already used with a different request body'),

  // Webhook URLs (webhooks' target rules), refused at submission with 422.
  webhooks_disabled: def(422, () => 'webhook_url: webhooks are disabled because WEBHOOK_SECRET is not configured (they could not be signed)'),
  webhook_url_not_absolute: def(422, () => 'webhook_url must be an absolute URL'),
  webhook_url_not_https: def(422, () => 'webhook_url must use https'),
  webhook_url_http_disabled: def(422, () => 'webhook_url must use https (plain http is disabled: WEBHOOK_ALLOW_HTTP=false)'),
  webhook_url_credentials: def(422, () => 'webhook_url must not carry credentials'),
  // The text does not list the allow-list: it is the operator's network layout, not the caller's.
  webhook_host_not_allowed: def<{ host: string }>(422, (p) => `webhook_url host ${p.host} is not in WEBHOOK_ALLOWED_HOSTS`),
} as const;

export type ErrorCode = keyof typeof ERRORS;
export type ErrorParams<C extends ErrorCode> = Parameters<(typeof ERRORS)[C]['text']>[0];

/** The codes whose text takes no parameters, and those whose text does. */
export type BareCode = { [C in ErrorCode]: ErrorParams<C> extends void ? C : never }[ErrorCode];
type ParamCode = Exclude<ErrorCode, BareCode>;

/** A failure named by its code and the parameters of its text: what engine, jobs and webhooks hand up. */
export type CodedError = { code: BareCode; params?: undefined } | { [C in ParamCode]: { code: C; params: ErrorParams<C> } }[ParamCode];

/** The one place a code's text is produced. */
export function errorText(error: CodedError): string {
  const entry = ERRORS[error.code] as Entry<unknown>;
  return entry.text(error.params);
}

export function errorStatus(code: ErrorCode): number {
  return ERRORS[code].status;
}

export function errorRetryAfterS(code: ErrorCode): number | undefined {
  const entry: Entry<never> = ERRORS[code];
  return entry.retryAfterS;
}
