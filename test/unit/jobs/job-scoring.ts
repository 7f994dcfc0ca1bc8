// Jobs score on the observed path and keep the v2 shape, as src/routes/v2/index.ts wires them; tests
// give them an engine (the contract fixture model, or a stand-in) the same way, with nothing recorded.
import { toV2Prediction } from '../../../src/http/answers.ts';
import type { JobsDeps } from '../../../src/jobs/jobs.ts';
import { ObservedScorer, type ObservedEngine } from '../../../src/ops/observed-scoring.ts';

export function jobScoring(engine: ObservedEngine): Pick<JobsDeps, 'scorer' | 'shape'> {
  return { scorer: new ObservedScorer(engine, undefined, () => {}), shape: toV2Prediction };
}
