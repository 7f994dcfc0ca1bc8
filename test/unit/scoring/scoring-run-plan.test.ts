// A batch's segments share ONNX runs by length: a short segment is not padded to a full one when a
// second run costs less than the padding (src/scoring/run-plan.ts). Whether the runs change any score
// is checked through the worker in scoring-scorer.test.ts (alone and in mixed batches alike).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RUN_OVERHEAD_PIECES, planRuns } from '../../../src/scoring/run-plan.ts';

/** What the plan minimises: each run's overhead plus its segments padded to its longest. */
function cost(pieces: readonly number[], runs: readonly number[][], overhead: number): number {
  return runs.reduce((sum, run) => sum + overhead + run.length * Math.max(...run.map((i) => pieces[i] as number)), 0);
}

/** Every way to split indices 0..n-1 into groups (set partitions), for checking small cases by brute force. */
function partitions(n: number): number[][][] {
  if (n === 0) return [[]];
  const out: number[][][] = [];
  for (const p of partitions(n - 1)) {
    p.forEach((_, g) => out.push(p.map((group, k) => (k === g ? [...group, n - 1] : group))));
    out.push([...p, [n - 1]]);
  }
  return out;
}

describe('planRuns: which segments share an ONNX run', () => {
  it('runs 40-turn chats cut in 8-token pieces (64 + 16 pieces each) as one run of the full segments and one of the rest', () => {
    const pieces = [64, 16, 64, 16, 64, 16, 64, 16];
    expect(planRuns(pieces)).toEqual([
      [0, 2, 4, 6],
      [1, 3, 5, 7],
    ]);
  });

  it('keeps segments of similar length in one run: another run would cost more than their padding', () => {
    expect(planRuns([40, 38, 40, 35, 40])).toEqual([[0, 2, 4, 1, 3]]);
  });

  it('keeps a lone short segment beside full ones when its padding costs less than a run', () => {
    expect(planRuns([64, 64, 1])).toEqual([[0, 1, 2]]);
    expect(planRuns([64, 1], RUN_OVERHEAD_PIECES)).toHaveLength(1);
  });

  it('answers no run for no segment and one run for one', () => {
    expect(planRuns([])).toEqual([]);
    expect(planRuns([7])).toEqual([[0]]);
  });

  it('puts every segment in exactly one run, whatever the lengths', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 64 }), fc.integer({ min: 0, max: 500 }), (pieces, overhead) => {
        const seen = planRuns(pieces, overhead).flat().sort((a, b) => a - b);
        expect(seen).toEqual(pieces.map((_, i) => i));
      }),
    );
  });

  it('costs no more than the best of every possible grouping (brute force, up to 7 segments)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 7 }), fc.integer({ min: 0, max: 300 }), (pieces, overhead) => {
        const best = Math.min(...partitions(pieces.length).map((p) => cost(pieces, p, overhead)));
        expect(cost(pieces, planRuns(pieces, overhead), overhead)).toBe(best);
      }),
      { numRuns: 200 },
    );
  });
});
