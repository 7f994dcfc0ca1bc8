// Delivers one webhook message per the Standard Webhooks spec, retrying with backoff until it is
// accepted (2xx), the attempts or the time budget run out, or the caller aborts (shutdown). A caller
// with a queue of its own may take each retry's time back instead of waiting for it here (deferRetries).
import { performance } from 'node:perf_hooks';
import { fullJitter, retryAfterMs, sleep } from './backoff.ts';
import { signWebhook } from './signing.ts';

/** How one HTTP attempt ended, as the metrics label it. */
export type AttemptResult = 'success' | 'http_error' | 'redirect' | 'timeout' | 'connection_error';

/** Where the caller counts attempts (the jobs pass their JobMetrics). */
export interface DeliveryMetrics {
  /** One HTTP attempt at delivering a webhook and how long it took. */
  attempt(result: AttemptResult, seconds: number): void;
}

export interface DeliveryPolicy {
  /** HMAC key: the decoded bytes of WEBHOOK_SECRET. */
  key: Buffer;
  timeoutMs: number;
  retryBaseMs: number;
  maxAttempts: number;
  /** Total time from the first attempt after which no further attempt starts. */
  maxRetryMs: number;
}

export interface WebhookMessage {
  /** `webhook-id`: the same on every attempt so the receiver can deduplicate. */
  id: string;
  body: string;
}

/** A delivery between its attempts: what a resumed run counts its limits from. */
export interface DeliveryProgress {
  attempts: number;
  /** When the first attempt began: what the retry budget counts from. */
  startedAt: number;
  /** Why the last attempt failed (status code or error class), never a response body. */
  lastError?: string | undefined;
  /**
   * With deferRetries: not delivered yet, and the next attempt is due at this time (epoch ms); the
   * caller resumes then from this progress.
   */
  retryAt?: number | undefined;
}

export interface DeliveryResult extends DeliveryProgress {
  delivered: boolean;
}

export interface DeliveryOptions {
  /** Aborts waiting and the attempt in progress (shutdown deadline). */
  signal?: AbortSignal;
  metrics?: DeliveryMetrics;
  /** After each attempt: how many were made, and when the first of them began (resumeFrom's, if given). */
  onAttempt?: (attempts: number, firstStartedAt: number) => void;
  /**
   * Attempts already made for this message (by a replica that stopped mid-delivery, or before a
   * deferred retry): WEBHOOK_MAX_ATTEMPTS and WEBHOOK_MAX_RETRY_MS count them too. `scheduled`: this
   * run is a retry deferRetries scheduled within the budget, made even if a busy queue starts it late.
   */
  resumeFrom?: DeliveryProgress & { scheduled?: boolean };
  /**
   * Answer `retryAt` rather than wait for a retry: a shared queue waits in Redis's delayed set, where
   * a receiver that is down holds none of its worker slots for up to WEBHOOK_MAX_RETRY_MS.
   */
  deferRetries?: boolean;
}

const USER_AGENT = 'conversation-risk-webhooks/1';

interface AttemptOutcome {
  ok: boolean;
  result: AttemptResult;
  error?: string;
  retryAfterMs?: number;
  /** The receiver said not to try again (410 Gone, as Standard Webhooks reads it). */
  final?: boolean;
}

async function attempt(url: URL, message: WebhookMessage, policy: DeliveryPolicy, signal: AbortSignal | undefined): Promise<AttemptOutcome> {
  // A fresh timestamp (and so signature) per attempt: receivers reject stale timestamps (replay guard).
  const timestamp = Math.floor(Date.now() / 1000);
  const timeout = AbortSignal.timeout(policy.timeoutMs);
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': message.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(policy.key, message.id, timestamp, message.body),
      },
      body: message.body,
      // A redirect could point anywhere, past the allow-list: it is a failed attempt, never followed.
      redirect: 'manual',
      signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
    });
    // The receiver's body is never read (nothing in it matters); cancelling frees the connection.
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { ok: true, result: 'success' };
    const waitHint =
      response.status === 429 || response.status === 503 ? retryAfterMs(response.headers.get('retry-after')) : undefined;
    // 410: the endpoint is gone (Standard Webhooks: stop sending to it); other failures may pass.
    if (response.status === 410) return { ok: false, result: 'http_error', error: 'HTTP 410 (gone: not tried again)', final: true };
    return {
      ok: false,
      result: response.status >= 300 && response.status < 400 ? 'redirect' : 'http_error',
      error: `HTTP ${response.status}`,
      ...(waitHint === undefined ? {} : { retryAfterMs: waitHint }),
    };
  } catch (err) {
    if (signal?.aborted) return { ok: false, result: 'connection_error', error: 'aborted by shutdown' };
    if (timeout.aborted) return { ok: false, result: 'timeout', error: `no response within ${policy.timeoutMs} ms` };
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    return { ok: false, result: 'connection_error', error: typeof code === 'string' ? code : 'connection failed' };
  }
}

export async function deliverWebhook(
  url: URL,
  message: WebhookMessage,
  policy: DeliveryPolicy,
  options: DeliveryOptions = {},
): Promise<DeliveryResult> {
  const { signal, metrics, onAttempt, resumeFrom, deferRetries } = options;
  const started = resumeFrom?.startedAt ?? Date.now();
  const made = resumeFrom?.attempts ?? 0;
  const late = made > 0 && resumeFrom?.scheduled !== true && Date.now() - started > policy.maxRetryMs;
  if (made >= policy.maxAttempts || late) {
    const why = 'attempts or retry budget used up before this replica took the delivery over';
    return { delivered: false, attempts: made, startedAt: started, lastError: resumeFrom?.lastError === undefined ? why : `${resumeFrom.lastError}; ${why}` };
  }
  let lastError = resumeFrom?.lastError;
  for (let n = made + 1; n <= policy.maxAttempts; n++) {
    const t0 = performance.now();
    const outcome = await attempt(url, message, policy, signal);
    metrics?.attempt(outcome.result, (performance.now() - t0) / 1000);
    onAttempt?.(n, started);
    if (outcome.ok) return { delivered: true, attempts: n, startedAt: started };
    lastError = outcome.error;
    if (signal?.aborted || n === policy.maxAttempts || outcome.final === true) return { delivered: false, attempts: n, startedAt: started, lastError };
    const backoff = fullJitter(policy.retryBaseMs, n - 1, policy.maxRetryMs);
    // Retry-After is a floor on the wait, never a way past the total budget.
    const wait = Math.max(backoff, outcome.retryAfterMs ?? 0);
    if (Date.now() + wait - started > policy.maxRetryMs) {
      return { delivered: false, attempts: n, startedAt: started, lastError: `${lastError ?? 'failed'}; retry budget exhausted` };
    }
    if (deferRetries === true) return { delivered: false, attempts: n, startedAt: started, retryAt: Date.now() + wait, lastError };
    try {
      await sleep(wait, signal);
    } catch {
      return { delivered: false, attempts: n, startedAt: started, lastError: `${lastError ?? 'failed'}; aborted by shutdown` };
    }
  }
  return { delivered: false, attempts: policy.maxAttempts, startedAt: started, lastError };
}
