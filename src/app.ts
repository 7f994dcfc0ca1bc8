// buildApp: the whole HTTP application, without listening. main.ts adds listeners; tests use inject
// or listen on port 0. Plugins go in lifecycle order: security headers, error mapping, request
// observation, public probes, then the protected context (auth -> rate limit -> routes).
import helmet from '@fastify/helmet';
import type { Server as HttpsServer } from 'node:https';
import Fastify, { LogController, type FastifyHttpsOptions, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.ts';
import type { ApiKey } from './http/auth.ts';
import { clientErrorHandler, expectationHandler, frameworkErrorHandler, registerErrorHandling } from './http/errors.ts';
import { BodyBudget } from './http/body-budget.ts';
import { codePointLengths } from './http/code-point-lengths.ts';
import { registerFramingCheck } from './http/framing.ts';
import { closingOptions, registerClosingRefusal } from './http/closing.ts';
import { registerConnectionTracking } from './http/connection.ts';
import { protectRoutes } from './http/protected.ts';
import { registerJsonBodyParser } from './http/json-body.ts';
import { registerOpenApi } from './http/openapi.ts';
import { serverOptions, tlsContextOptions, type TlsMaterial } from './http/listeners.ts';
import { redirectForwardedHttp } from './http/proxy.ts';
import { createAudit } from './ops/audit.ts';
import { createLogger, type Logger } from './ops/logger.ts';
import type { Metrics } from './ops/metrics.ts';
import type { SharedRedis } from './ops/redis.ts';
import { consoleRoutes } from './routes/console.ts';
import { healthRoutes, type ReadinessDependency } from './routes/health.ts';
import { infoRoute } from './routes/info.ts';
import { predictRoutes } from './routes/predict.ts';
import { ObservedScorer } from './ops/observed-scoring.ts';
import type { ProtectedRouteDeps } from './routes/deps.ts';
import { v2Routes } from './routes/v2/index.ts';
import type { ScorerOptions } from './scoring/scorer.ts';
import type { Scorer } from './scoring/types.ts';

export type { TlsMaterial };

export interface AppDeps {
  config: Config;
  scorer: Scorer;
  /** Accepted API keys (see http/auth.ts loadApiKeys). */
  keys: ApiKey[];
  logger?: Logger;
  metrics?: Metrics;
  /** Serve HTTPS with this certificate; plain HTTP when absent (TLS_MODE=off, or inject in tests). */
  tls?: TlsMaterial;
}

/**
 * The shared Redis for REDIS_URL, closed with the app; undefined keeps all state in this process.
 * ioredis is loaded only then.
 */
async function sharedState(config: Config, logger: Logger): Promise<SharedRedis | undefined> {
  if (config.REDIS_URL === undefined) return undefined;
  const { connectRedis } = await import('./ops/redis.ts');
  return connectRedis({
    url: config.REDIS_URL,
    prefix: config.REDIS_KEY_PREFIX,
    onStatus: (up, error) =>
      up
        ? logger.info({ dependency: 'redis' }, 'shared state (Redis) reachable')
        : logger.error({ dependency: 'redis', reason: 'redis_unreachable', error }, 'shared state (Redis) unreachable: not ready; rate limits not enforced, jobs answer 503'),
  });
}

/** The engine settings a Config asks for, reporting each scoring call to `metrics` and a lost model to `logger`. */
export function scorerOptions(config: Config, metrics: Metrics | undefined, logger?: Logger): ScorerOptions {
  return {
    modelDir: config.MODEL_DIR,
    manifestSha256: config.MODEL_SHA256,
    workers: config.WORKERS,
    intraOpThreads: config.INTRA_OP_THREADS,
    maxQueue: config.MAX_QUEUE,
    timeoutMs: config.REQUEST_TIMEOUT_MS,
    ...(metrics ? { onObservation: metrics.recordObservation } : {}),
    ...(logger ? { onDegraded: (reason: string) => logger.error({ reason }, 'a scoring worker could not load the model: serving degraded (/health degraded, scoring 503)') } : {}),
  };
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, scorer, metrics } = deps;
  const logger = deps.logger ?? createLogger({ level: 'silent' });
  const options: FastifyServerOptions = {
    loggerInstance: logger,
    // Request lines are written below from the route pattern; fastify's own would carry the raw URL.
    logController: new LogController({ disableRequestLogging: true }),
    // A client-chosen request id would be copied into every log line: never trust it.
    requestIdHeader: false,
    bodyLimit: config.BODY_LIMIT_BYTES,
    // A hop count becomes the predicate fastify itself builds for one (its types omit the number form).
    trustProxy:
      typeof config.TRUST_PROXY === 'number'
        ? ((hops: number) => (_address: string, hop: number) => hop < hops)(config.TRUST_PROXY)
        : config.TRUST_PROXY,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    // Fastify's default holds an idle keep-alive connection 72 s, past every other cut.
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    // Requests arriving while closing get the catalogue's 503 (http/closing.ts), not Fastify's bare one.
    ...closingOptions,
    ajv: {
      // Bodies are validated as sent: no coercion ("123" stays a string, 5 is not a conversation)
      // and no silent removal of unknown fields (they are a 422, see http/schemas.ts).
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false },
      // Lengths in code points without walking every string: they blocked the event loop (code-point-lengths.ts).
      plugins: [codePointLengths],
    },
  };
  const { keepAliveTimeout: _keepAlive, requestTimeout: _request, ...timeouts } = serverOptions(config);
  const app = (
    deps.tls === undefined
      ? Fastify({ ...options, http: timeouts })
      : Fastify({
          ...options,
          https: {
            ...tlsContextOptions(deps.tls),
            handshakeTimeout: config.REQUEST_TIMEOUT_MS,
            ...timeouts,
          },
        } as FastifyHttpsOptions<HttpsServer>)
  ) as unknown as FastifyInstance;

  // A handshake that times out or fails leaves the socket open unless someone closes it.
  if (deps.tls !== undefined) app.server.on('tlsClientError', (_err: Error, socket: { destroy(): void }) => socket.destroy());
  app.server.on('checkExpectation', expectationHandler);

  app.decorateRequest('apiKeyId', undefined);
  await app.register(helmet, { global: true });
  registerErrorHandling(app, config.BODY_LIMIT_BYTES);
  registerFramingCheck(app);
  registerClosingRefusal(app);
  registerConnectionTracking(app);
  registerJsonBodyParser(app);

  if (config.TLS_MODE === 'off') redirectForwardedHttp(app, config);

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const seconds = reply.elapsedTime / 1000;
    metrics?.httpRequests.inc({ route, method: request.method, status: String(reply.statusCode) });
    metrics?.httpDuration.observe({ route, method: request.method }, seconds);
    request.log.info(
      { method: request.method, route, statusCode: reply.statusCode, responseTimeMs: Math.round(reply.elapsedTime) },
      'request completed',
    );
  });

  const shared = await sharedState(config, logger);
  if (shared !== undefined) {
    // Registered before every plugin, so it runs after their own onClose hooks (jobs drain first).
    app.addHook('onClose', async () => shared.close());
    // Serving before the connection is up would skip rate limits and refuse jobs for nothing.
    await shared.whenReady(5000);
  }

  // Public GET /openapi.json, generated from the schemas of every route registered after it.
  await registerOpenApi(app);
  const dependencies: ReadinessDependency[] = shared === undefined ? [] : [{ reason: 'redis_unreachable', up: () => shared.ready() }];
  if (shared !== undefined) metrics?.observeDependency('redis', () => shared.ready());
  await app.register(healthRoutes, { scorer, dependencies });
  // Public GET /console: the review console's static files (CONSOLE_ENABLED); its calls use the API below.
  if (config.CONSOLE_ENABLED) await app.register(consoleRoutes);

  const bodyBudget = new BodyBudget(config.MAX_INFLIGHT_BODY_BYTES, config.BODY_LIMIT_BYTES);
  metrics?.observeInflightBodies(() => bodyBudget.used);
  const routeDeps: ProtectedRouteDeps = {
    config,
    logger,
    // Every prediction, from a route or a job, is recorded once on this path: metrics and the audit line.
    scoring: new ObservedScorer(scorer, metrics, createAudit(logger, config.AUDIT_LOG, config.AUDIT_HASH_KEY)),
    metrics,
    shared,
  };
  await app.register(async (scope) => {
    await protectRoutes(scope, {
      keys: deps.keys,
      rateLimitMax: config.RATE_LIMIT_MAX,
      rateLimitWindowMs: config.RATE_LIMIT_WINDOW_MS,
      metrics,
      shared,
      bodyBudget,
    });
    await scope.register(predictRoutes, routeDeps);
    await scope.register(infoRoute, { scorer });
    // ---- Preview /v2 (owned by the v2 engineer) --------------------------------------------------
    // Registered here, inside the protected context, so it inherits auth and the per-key rate limit.
    await scope.register(v2Routes, { ...routeDeps, prefix: '/v2' });
    // ------------------------------------------------------------------------------------------------
  });

  return app;
}
