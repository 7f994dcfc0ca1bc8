// The one path from a validated HTTP body to the engine and back: ages checked, cancellation wired to
// the client connection, metrics and audit recorded, model version stamped on the answer. v1 routes use
// it, and later interfaces can too, so every prediction is observed the same way.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ageError } from '../scoring/ages.ts';
import type { ModelManifest, Prediction, ScoreRequest, Scorer } from '../scoring/types.ts';
import type { AuditJobRef, AuditSink } from '../ops/audit.ts';
import type { Metrics } from '../ops/metrics.ts';
import { ConnectionClosedError, connectionSignal } from './connection.ts';
import { HttpError } from './errors.ts';

export interface ScoringDeps {
  scorer: Scorer;
  metrics: Metrics | undefined;
  audit: AuditSink;
}

export const modelVersion = (m: ModelManifest) => `${m.name}@${m.version}`;

/** Records one scored conversation, however it was submitted: the prediction metric and the audit line. */
export function observePrediction(deps: ScoringDeps, conversation: string, prediction: Prediction, latencyMs: number, job?: AuditJobRef): void {
  deps.metrics?.recordPrediction(prediction);
  const manifest = deps.scorer.manifest;
  deps.audit(conversation, prediction, manifest === undefined ? 'unknown' : modelVersion(manifest), latencyMs, job);
}

/**
 * Throws a 422 naming the field when an age is not one of the accepted forms.
 * `where` prefixes the field, e.g. `conversations[3].` for a batch item.
 */
export function checkAges(item: { age_a?: string | undefined; age_b?: string | undefined }, where = ''): void {
  for (const field of ['age_a', 'age_b'] as const) {
    const value = item[field];
    if (value === undefined) continue;
    const problem = ageError(field, value);
    if (problem !== undefined) throw new HttpError(422, `${where}${problem}`);
  }
}

/** Scores `items` for this request; rejects with ScoringError, which the error handler maps. */
export async function score(
  deps: ScoringDeps,
  items: ScoreRequest[],
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Prediction[]> {
  // A client that hangs up no longer needs its queued work: it is withdrawn so the queue serves others,
  // and a request whose answer can no longer be written is not scored at all.
  const connection = connectionSignal(request);
  let predictions: Prediction[];
  try {
    predictions = await deps.scorer.score(items, { signal: connection.signal });
  } catch (err) {
    throw connection.signal.aborted ? new ConnectionClosedError() : err;
  } finally {
    connection.done();
  }
  const manifest = deps.scorer.manifest;
  if (manifest !== undefined) reply.header('x-model-version', modelVersion(manifest)).header('x-model-name', manifest.name);
  const latencyMs = reply.elapsedTime;
  predictions.forEach((prediction, i) => {
    const item = items[i];
    if (item !== undefined) observePrediction(deps, item.conversation, prediction, latencyMs);
  });
  return predictions;
}
