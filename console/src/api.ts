// The console's only way out of the tab: calls to this appliance's own API, each with the bearer key
// the reviewer typed. The key lives in a KeyHolder, in this tab's memory: never in storage, a cookie
// or a URL. Answers are checked against the wire types before use; failures become ApiError (the
// API's {detail}, status and Retry-After) or a NetworkError, which failureMessage() words for a reviewer.
import type { Ages, BatchItem, Evidence, Explanation, JobAccepted, JobStatus, JobView, Message, Scores } from './types.ts';

/** What a Bearer header can carry, as the appliance checks its keys (src/http/auth.ts). */
const KEY_CHARACTERS = /^[\x20-\x7e]+$/;

export class KeyHolder {
  #key: string | undefined;

  /** Holds `typed` (trimmed); throws a KeyError when no HTTP header could carry it. */
  set(typed: string): void {
    const key = typed.trim();
    if (key === '') throw new KeyError('Type an API key first.');
    if (!KEY_CHARACTERS.test(key)) throw new KeyError('An API key holds printable ASCII characters only: this one cannot be sent in an HTTP header.');
    this.#key = key;
  }

  clear(): void {
    this.#key = undefined;
  }

  get present(): boolean {
    return this.#key !== undefined;
  }

  authorization(): string {
    if (this.#key === undefined) throw new KeyError('Type the API key at the top of the page and press Use key.');
    return `Bearer ${this.#key}`;
  }
}

export class KeyError extends Error {
  override name = 'KeyError';
}

/** An error answer of the API: its status, its `detail`, and Retry-After in seconds when given. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly detail: string;
  readonly retryAfterS: number | undefined;

  constructor(status: number, detail: string, retryAfterS: number | undefined) {
    super(`${status}: ${detail}`);
    this.status = status;
    this.detail = detail;
    this.retryAfterS = retryAfterS;
  }
}

export class NetworkError extends Error {
  override name = 'NetworkError';
}

/** An answer that is not what the API documents (a proxy's page, another version). */
export class AnswerError extends Error {
  override name = 'AnswerError';
}

/** Retry-After as seconds: a number of seconds, or an HTTP date. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

interface Answer {
  status: number;
  body: unknown;
}

async function call(key: KeyHolder, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = { authorization: key.authorization(), accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      credentials: 'omit',
      cache: 'no-store',
      // A redirect would only lead away from the appliance: refuse it rather than follow with the key.
      redirect: 'error',
      referrerPolicy: 'no-referrer',
    });
  } catch (err) {
    throw new NetworkError(err instanceof Error ? err.message : String(err));
  }
  let parsed: unknown;
  try {
    parsed = await response.json();
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const detail = isRecord(parsed) && typeof parsed.detail === 'string' ? parsed.detail : response.statusText || 'no detail';
    throw new ApiError(response.status, detail, retryAfterSeconds(response.headers.get('retry-after')));
  }
  return { status: response.status, body: parsed };
}

export interface Api {
  /** v1 `POST /predict?explain=true`: the appliance parses the text (speakers, flat text) itself. */
  scoreText(conversation: string, ages: Ages): Promise<Scores>;
  /** `POST /v2/predict` with `explain: true`. */
  scoreMessages(messages: Message[], ages: Ages): Promise<Scores>;
  /** `POST /v2/predict/batch`. */
  submitJob(items: BatchItem[]): Promise<JobAccepted>;
  /** `GET /v2/predict/batch/{job_id}`. */
  job(jobId: string): Promise<JobView>;
}

export function createApi(key: KeyHolder): Api {
  return {
    async scoreText(conversation, ages) {
      const answer = await call(key, 'POST', '/predict?explain=true', { conversation, ...ages });
      return scoresOf(answer.body, 'harmful_score');
    },
    async scoreMessages(messages, ages) {
      const answer = await call(key, 'POST', '/v2/predict', { messages, ...ages, explain: true });
      return scoresOf(answer.body, 'harmfulness_score');
    },
    async submitJob(items) {
      const answer = await call(key, 'POST', '/v2/predict/batch', { mode: 'batch', conversations: items });
      const body = answer.body;
      if (!isRecord(body) || typeof body.job_id !== 'string' || !isJobStatus(body.status) || typeof body.poll_url !== 'string') {
        throw new AnswerError('the job submission was answered without a job id');
      }
      return { job_id: body.job_id, status: body.status, poll_url: body.poll_url };
    },
    async job(jobId) {
      // Built from the id, not the answer's poll_url: the console only ever calls its own origin's API.
      const answer = await call(key, 'GET', `/v2/predict/batch/${encodeURIComponent(jobId)}`);
      return jobOf(answer.body);
    },
  };
}

// ---- answers checked against the wire types ------------------------------------------------------

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const JOB_STATUSES: readonly string[] = ['queued', 'running', 'done', 'failed'];
const isJobStatus = (x: unknown): x is JobStatus => typeof x === 'string' && JOB_STATUSES.includes(x);
const RISK_LEVELS: readonly string[] = ['Safe', 'Low Risk', 'Medium Risk', 'High Risk', 'Critical'];
const ATTRIBUTIONS: readonly string[] = ['user1', 'user2', 'neither'];
const TURN_SPEAKERS: readonly string[] = ['user1', 'user2', 'unknown'];

function explanationOf(x: unknown): Explanation {
  if (!isRecord(x) || !Array.isArray(x.turn_scores) || !x.turn_scores.every(isNumber) || !Array.isArray(x.evidence)) {
    throw new AnswerError('the explanation is not in the documented shape');
  }
  const first = x.first_alert_index;
  if (first !== null && !isNumber(first)) throw new AnswerError('first_alert_index is neither a number nor null');
  const evidence: Evidence[] = x.evidence.map((e: unknown) => {
    if (!isRecord(e) || !isNumber(e.index) || !isNumber(e.weight) || typeof e.user !== 'string' || !TURN_SPEAKERS.includes(e.user)) {
      throw new AnswerError('an evidence entry is not in the documented shape');
    }
    return { index: e.index, user: e.user as Evidence['user'], weight: e.weight, ...(isNumber(e.line) ? { line: e.line } : {}) };
  });
  const lines = x.turn_lines;
  return {
    turn_scores: x.turn_scores,
    first_alert_index: first,
    evidence,
    ...(Array.isArray(lines) && lines.every(isNumber) ? { turn_lines: lines } : {}),
  };
}

/** A prediction (v1's `harmful_score` or v2's `harmfulness_score`) as Scores. */
export function scoresOf(x: unknown, scoreField: 'harmful_score' | 'harmfulness_score'): Scores {
  if (!isRecord(x)) throw new AnswerError('the answer is not a JSON object');
  const score = x[scoreField];
  const p = x.user_probabilities;
  if (
    !isNumber(score) ||
    typeof x.is_harmful !== 'boolean' ||
    typeof x.risk_level !== 'string' ||
    !RISK_LEVELS.includes(x.risk_level) ||
    typeof x.predatory_user !== 'string' ||
    !ATTRIBUTIONS.includes(x.predatory_user) ||
    !isRecord(p) ||
    !isNumber(p.user1) ||
    !isNumber(p.user2) ||
    !isNumber(p.neither) ||
    !isNumber(x.confidence)
  ) {
    throw new AnswerError('the prediction is not in the documented shape');
  }
  return {
    harmfulness_score: score,
    is_harmful: x.is_harmful,
    risk_level: x.risk_level as Scores['risk_level'],
    predatory_user: x.predatory_user as Scores['predatory_user'],
    user_probabilities: { user1: p.user1, user2: p.user2, neither: p.neither },
    confidence: x.confidence,
    num_segments: isNumber(x.num_segments) ? x.num_segments : 1,
    used_age_features: x.used_age_features === true,
    ...(x.explanation === undefined ? {} : { explanation: explanationOf(x.explanation) }),
  };
}

function jobOf(x: unknown): JobView {
  if (!isRecord(x) || typeof x.job_id !== 'string' || !isJobStatus(x.status) || !isRecord(x.progress) || !isNumber(x.progress.done) || !isNumber(x.progress.total)) {
    throw new AnswerError('the job is not in the documented shape');
  }
  const view: JobView = { job_id: x.job_id, status: x.status, progress: { done: x.progress.done, total: x.progress.total } };
  if (typeof x.error === 'string') view.error = x.error;
  if (isRecord(x.results)) {
    // A map keyed by the caller's ids: any string is a key (`__proto__` included), so no plain object.
    const results: Record<string, Scores> = Object.create(null) as Record<string, Scores>;
    for (const [id, result] of Object.entries(x.results)) results[id] = scoresOf(result, 'harmfulness_score');
    view.results = results;
  }
  return view;
}

// ---- what a reviewer reads when a call fails -------------------------------------------------------

function clock(secondsFromNow: number): string {
  return new Date(Date.now() + secondsFromNow * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
}

const retryIn = (s: number | undefined) => (s === undefined ? 'Retry shortly' : `Retry in ${s} s (at ${clock(s)})`);

/** One sentence or two for the notice area: what happened and what to do. */
export function failureMessage(err: unknown): string {
  if (err instanceof KeyError) return err.message;
  if (err instanceof NetworkError) return `Could not reach the appliance (${err.message}). Check the connection and try again.`;
  if (err instanceof AnswerError) return `The appliance answered something the console does not understand: ${err.message}.`;
  if (!(err instanceof ApiError)) return `Something went wrong in the console: ${err instanceof Error ? err.message : String(err)}.`;
  const { status, detail, retryAfterS } = err;
  switch (status) {
    case 401:
      return `No usable API key reached the appliance (401: ${detail}). A key is one word with no spaces: type it again and press Use key.`;
    case 403:
      return `The appliance does not accept this API key (403: ${detail}). Check the key, type it again and press Use key.`;
    case 429:
      return `Rate limit reached for this API key (429: ${detail}). ${retryIn(retryAfterS)}.`;
    case 503:
      if (/not loaded|degraded/i.test(detail)) {
        return `The model is not loaded: the appliance is degraded and scores nothing (503: ${detail}). ${retryIn(retryAfterS)}; if it lasts, tell the appliance's operator.`;
      }
      return `The appliance cannot take this now (503: ${detail}). ${retryIn(retryAfterS)}.`;
    case 404:
      return `Not found (404: ${detail}). A job is kept for a limited time and lost when the appliance restarts: submit the file again.`;
    case 413:
      return `Too large for the appliance (413: ${detail}). Split it into smaller parts.`;
    case 400:
    case 415:
    case 422:
      return `The appliance refused the input (${status}: ${detail}).`;
    default:
      return `The appliance answered ${status}: ${detail}.`;
  }
}
