// Public probes. None of them is authenticated or rate limited, and none touches the scoring queue,
// so they answer promptly while a long conversation is being scored.
import type { FastifyInstance } from 'fastify';
import { healthSchema } from '../http/schemas.ts';
import type { Scorer } from '../scoring/types.ts';

const livenessSchema = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['alive'] } },
  required: ['status'],
  additionalProperties: false,
} as const;

export interface HealthOptions {
  scorer: Scorer;
  /** False while a configured shared dependency (Redis) is unreachable. */
  dependenciesReady?: () => boolean;
}

export async function healthRoutes(app: FastifyInstance, opts: HealthOptions): Promise<void> {
  const status = () => (opts.scorer.ready ? 'healthy' : 'degraded');

  // Always 200: monitoring reads the body; a degraded appliance is up, just not scoring.
  app.get('/health', { schema: { response: { 200: healthSchema } } }, async () => ({ status: status() }));

  app.get('/livez', { schema: { response: { 200: livenessSchema } } }, async () => ({ status: 'alive' }));

  // Kubernetes readiness: route traffic here only when the model can answer and, with REDIS_URL, the
  // shared state is reachable (else limits and jobs would differ between replicas).
  app.get('/readyz', { schema: { response: { 200: healthSchema, 503: healthSchema } } }, async (_request, reply) => {
    const s = status() === 'healthy' && (opts.dependenciesReady?.() ?? true) ? 'healthy' : 'degraded';
    return reply.code(s === 'healthy' ? 200 : 503).send({ status: s });
  });
}
