// The evaluation's scoring harness, shared by run.ts and every guard: the scorer interface they all
// score through, scoring in batches, and a deterministic subsample of records.

import type { Prediction, ScoreRequest } from '../../src/scoring/types.ts';
import { hash32 } from '../data/rng.ts';

/** Anything that scores requests the way the server does (an EngineScorer). */
export interface BatchScorer {
  score(requests: ScoreRequest[]): Promise<Prediction[]>;
}

/** Scores `requests` in calls of `batch` (in order), so a long list never becomes one huge call. */
export async function scoreInBatches(scorer: BatchScorer, requests: readonly ScoreRequest[], batch = 100): Promise<Prediction[]> {
  const out: Prediction[] = [];
  for (let i = 0; i < requests.length; i += batch) out.push(...(await scorer.score(requests.slice(i, i + batch))));
  return out;
}

/** Up to `max` records, chosen by a hash of their id (deterministic, independent of corpus order). */
export function deterministicSubsample<T extends { id: string }>(records: readonly T[], max: number, salt = 'recut'): T[] {
  if (records.length <= max) return [...records];
  return [...records]
    .map((r) => ({ r, h: hash32(`${salt}:${r.id}`) }))
    .sort((a, b) => a.h - b.h || (a.r.id < b.r.id ? -1 : 1))
    .slice(0, max)
    .map(({ r }) => r);
}
