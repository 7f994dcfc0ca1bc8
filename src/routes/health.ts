// Public probes. None of them is authenticated or rate limited, and none touches the scoring queue,
// so they answer promptly while a long conversation is being scored.
import type { FastifyInstance } from 'fastify';
import { healthSchema, NOT_READY_REASONS, readinessSchema, type NotReadyReason } from '../http/schemas.ts';
import type { Scorer } from '../scoring/types.ts';

const livenessSchema = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['alive'] } },
  required: ['status'],
  additionalProperties: false,
} as const;

/** A dependency readiness waits for, and the reason /readyz names while it is down. */
export interface ReadinessDependency {
  reason: Exclude<NotReadyReason, 'model_not_loaded'>;
  up: () => boolean;
}

export interface HealthOptions {
  scorer: Scorer;
  /** Configured shared dependencies (Redis), each not ready while down. */
  dependencies?: ReadinessDependency[];
}

/** Why the service is not ready, in NOT_READY_REASONS' order; empty when it is. */
export function notReadyReasons(opts: HealthOptions): NotReadyReason[] {
  const down = new Set<NotReadyReason>((opts.dependencies ?? []).filter((d) => !d.up()).map((d) => d.reason));
  if (!opts.scorer.ready) down.add('model_not_loaded');
  return NOT_READY_REASONS.filter((r) => down.has(r));
}

export async function healthRoutes(app: FastifyInstance, opts: HealthOptions): Promise<void> {
  const status = () => (opts.scorer.ready ? 'healthy' : 'degraded');

  // Always 200: monitoring reads the body; a degraded appliance is up, just not scoring.
  app.get('/health', { schema: { response: { 200: healthSchema } } }, async () => ({ status: status() }));

  app.get('/livez', { schema: { response: { 200: livenessSchema } } }, async () => ({ status: 'alive' }));

  // Kubernetes readiness: route traffic here only when the model can answer and, with REDIS_URL, the
  // shared state is reachable (else limits and jobs would differ between replicas). A pod that never
  // becomes ready says why, here as in its log and its metrics.
  app.get('/readyz', { schema: { response: { 200: readinessSchema, 503: readinessSchema } } }, async (_request, reply) => {
    const reasons = notReadyReasons(opts);
    return reasons.length === 0 ? reply.code(200).send({ status: 'healthy' }) : reply.code(503).send({ status: 'degraded', reasons });
  });
}
