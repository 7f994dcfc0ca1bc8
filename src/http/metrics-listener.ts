// The metrics port's server: GET /metrics only, for Prometheus. It answers everything else as the API
// port does (a catalogue 404 or 405 that echoes nothing of the URL, {detail, code} for bad framing, the
// closing 503), and takes the API port's cuts for stalled and idle connections (listeners.ts
// serverOptions): Node's defaults let a slowloris hold it about a minute.
import Fastify, { type FastifyInstance } from 'fastify';
import type { ServerOptions } from 'node:http';
import type { Metrics } from '../ops/metrics.ts';
import { closingOptions, registerClosingRefusal } from './closing.ts';
import { clientErrorHandler, expectationHandler, frameworkErrorHandler, registerErrorHandling } from './errors.ts';

/** Scrapes carry no body: anything larger than this is refused before it is read. */
const METRICS_BODY_LIMIT = 1024;

/** A fastify instance serving only GET /metrics; the caller listens on METRICS_HOST:METRICS_PORT. */
export function buildMetricsServer(metrics: Metrics, options: ServerOptions): FastifyInstance {
  const { keepAliveTimeout, requestTimeout, ...http } = options;
  const server = Fastify({
    logger: false,
    http,
    bodyLimit: METRICS_BODY_LIMIT,
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    ...closingOptions,
    ...(keepAliveTimeout === undefined ? {} : { keepAliveTimeout }),
    ...(requestTimeout === undefined ? {} : { requestTimeout }),
  }) as unknown as FastifyInstance;
  server.server.on('checkExpectation', expectationHandler);
  registerErrorHandling(server, METRICS_BODY_LIMIT);
  registerClosingRefusal(server);
  server.get('/metrics', async (_request, reply) => {
    reply.header('content-type', metrics.registry.contentType);
    return metrics.registry.metrics();
  });
  return server;
}
