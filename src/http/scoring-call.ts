// The one path from a validated HTTP body to the engine and back: ages checked, cancellation wired to
// the client connection, the model version stamped on the answer. Scoring itself goes through the
// observed path (ops/observed-scoring.ts), which records metrics and the audit line for routes and
// jobs alike.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { modelVersion, type ObservedAnswer, type ObservedScorer } from '../ops/observed-scoring.ts';
import { ageError } from '../scoring/ages.ts';
import type { Prediction, ScoreRequest } from '../scoring/types.ts';
import { ConnectionClosedError, connectionSignal } from './connection.ts';
import { HttpError } from './errors.ts';

export interface ScoringDeps {
  scoring: ObservedScorer;
}

/**
 * Throws a 422 naming the field when an age is not one of the accepted forms.
 * `where` prefixes the field, e.g. `conversations[3].` for a batch item.
 */
export function checkAges(item: { age_a?: string | undefined; age_b?: string | undefined }, where = ''): void {
  for (const field of ['age_a', 'age_b'] as const) {
    const value = item[field];
    if (value === undefined) continue;
    const problem = ageError(field, value, where);
    if (problem !== undefined) throw new HttpError(problem);
  }
}

/** Scores `items` for this request, each shaped by `shape`; rejects with ScoringError, which the error handler maps. */
export async function score<A extends ObservedAnswer>(
  deps: ScoringDeps,
  items: ScoreRequest[],
  request: FastifyRequest,
  reply: FastifyReply,
  shape: (prediction: Prediction, item: ScoreRequest) => A,
): Promise<A[]> {
  // A client that hangs up no longer needs its queued work: it is withdrawn so the queue serves others,
  // and a request whose answer can no longer be written is not scored at all.
  const connection = connectionSignal(request);
  let answers: A[];
  try {
    answers = await deps.scoring.score(items, { shape, latencyMs: () => reply.elapsedTime }, { signal: connection.signal });
  } catch (err) {
    throw connection.signal.aborted ? new ConnectionClosedError() : err;
  } finally {
    connection.done();
  }
  const manifest = deps.scoring.manifest;
  if (manifest !== undefined) reply.header('x-model-version', modelVersion(manifest)).header('x-model-name', manifest.name);
  return answers;
}
