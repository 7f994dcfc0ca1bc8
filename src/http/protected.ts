// The protected context: every route registered inside it is authenticated (onRequest, before the
// body is read), rate limited per API key, and its body admitted against the app's in-flight budget
// (preParsing). Encapsulation keeps all three off the public probes.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from '../ops/metrics.ts';
import type { SharedRedis } from '../ops/redis.ts';
import { bearerAuth, type ApiKey } from './auth.ts';
import { registerBodyBudget, type BodyBudget } from './body-budget.ts';
import { HttpError } from './errors.ts';

export interface ProtectedContextOptions {
  keys: ApiKey[];
  rateLimitMax: number;
  rateLimitWindowMs: number;
  metrics: Metrics | undefined;
  /** With Redis, every replica counts against the same per-key window. */
  shared?: SharedRedis | undefined;
  /** Request-body bytes in flight across the whole app. */
  bodyBudget: BodyBudget;
}

/** Auth then rate limit; the caller registers its routes on the returned scope afterwards. */
export async function protectRoutes(scope: FastifyInstance, opts: ProtectedContextOptions): Promise<void> {
  scope.addHook('onRequest', bearerAuth(opts.keys));
  // Registered after the auth hook: its per-route onRequest hook runs after every context hook, so
  // the key is known when the bucket is chosen, and unauthenticated requests never spend a key's quota.
  await scope.register(rateLimit, {
    max: opts.rateLimitMax,
    timeWindow: opts.rateLimitWindowMs,
    keyGenerator: (request: FastifyRequest) => request.apiKeyId ?? 'unauthenticated',
    onExceeded: () => opts.metrics?.rateLimited.inc(),
    ...(opts.shared === undefined
      ? {}
      : {
          redis: opts.shared.limiter,
          nameSpace: `${opts.shared.prefix}:rate-limit:`,
          // While Redis is down, requests are served unlimited rather than refused (readiness reports it).
          skipOnError: true,
        }),
    errorResponseBuilder: (_request, context) =>
      new HttpError({ code: 'rate_limited', params: { max: context.max, after: context.after } }),
  });
  // After auth and the rate limit (onRequest): only an admitted request's body is counted and read.
  registerBodyBudget(scope, opts.bodyBudget);
  const windowSeconds = Math.ceil(opts.rateLimitWindowMs / 1000);
  scope.addHook('onSend', (_request, reply, payload, done) => {
    addStandardRateLimitHeaders(reply, windowSeconds);
    // Scores, previews (the conversation's own text) and results: no cache on the way keeps a copy.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });
}

/** The policy's name in the standard headers: one quota per API key. */
export const RATE_LIMIT_POLICY = 'per-key';

/**
 * The IETF httpapi draft's `RateLimit-Policy` and `RateLimit` fields (draft-ietf-httpapi-ratelimit-headers),
 * written beside the `x-ratelimit-*` ones @fastify/rate-limit sets, from the same figures, so the two
 * never disagree: `"per-key";q=<quota>;w=<window s>` and `"per-key";r=<remaining>;t=<reset s>`.
 */
function addStandardRateLimitHeaders(reply: FastifyReply, windowSeconds: number): void {
  const limit = reply.getHeader('x-ratelimit-limit');
  const remaining = reply.getHeader('x-ratelimit-remaining');
  const reset = reply.getHeader('x-ratelimit-reset');
  // Absent when the limiter did not run (a request refused by auth, or Redis down with skipOnError).
  if (limit === undefined || remaining === undefined || reset === undefined) return;
  reply.header('ratelimit-policy', `"${RATE_LIMIT_POLICY}";q=${String(limit)};w=${windowSeconds}`);
  reply.header('ratelimit', `"${RATE_LIMIT_POLICY}";r=${String(remaining)};t=${String(reset)}`);
}
