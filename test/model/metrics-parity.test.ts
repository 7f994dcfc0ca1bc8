// One ROC-AUC for the whole project: the eval's (scripts/eval/metrics.ts) and the one training, the
// ensemble and the probe use (scripts/train/metrics.py) give the same figure, tied scores given their
// average rank, on the same cases.
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rocAuc } from '../../scripts/eval/metrics.ts';
import { createRng } from '../../scripts/data/rng.ts';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';

const hasNumpy = spawnSync(TRAINING_PYTHON, ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0;

/** Cases with many ties (scores on a coarse grid), all ties, perfect and reversed order, one class. */
function cases(): Array<{ labels: number[]; scores: number[] }> {
  const rng = createRng(2026);
  const random = Array.from({ length: 12 }, (_, k) => {
    const n = 20 + k * 17;
    const labels = Array.from({ length: n }, () => (rng.chance(0.35) ? 1 : 0));
    const grid = 2 + (k % 5);
    return { labels, scores: labels.map((y) => Math.round((rng.next() + y * 0.3) * grid) / grid) };
  });
  return [
    ...random,
    { labels: [0, 1, 0, 1], scores: [0.5, 0.5, 0.5, 0.5] },
    { labels: [0, 0, 1, 1], scores: [0.1, 0.2, 0.3, 0.4] },
    { labels: [1, 1, 0, 0], scores: [0.1, 0.2, 0.3, 0.4] },
    { labels: [1, 0, 1, 0, 1], scores: [0.9, 0.9, 0.2, 0.2, 0.5] },
  ];
}

describe('ROC-AUC parity between TypeScript and Python', () => {
  it.skipIf(!hasNumpy)('gives the same figure in both languages, ties averaged', () => {
    const all = cases();
    const script = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(join(process.cwd(), 'scripts/train'))})`,
      'from metrics import roc_auc',
      'cases = json.load(sys.stdin)',
      'print(json.dumps([roc_auc(c["labels"], c["scores"]) for c in cases]))',
    ].join('\n');
    const python = JSON.parse(execFileSync(TRAINING_PYTHON, ['-c', script], { input: JSON.stringify(all), encoding: 'utf8' })) as number[];
    const ts = all.map((c) => rocAuc(c.labels, c.scores));
    python.forEach((p, i) => expect(p).toBeCloseTo(ts[i] as number, 12));
    // All scores tied: 0.5 exactly, not an order-dependent figure.
    expect(ts[12]).toBe(0.5);
    expect(ts[13]).toBe(1);
    expect(ts[14]).toBe(0);
  });

  it.skipIf(!hasNumpy)('is undefined with one class in both languages', () => {
    const out = execFileSync(TRAINING_PYTHON, ['-c', `import sys; sys.path.insert(0, ${JSON.stringify(join(process.cwd(), 'scripts/train'))}); from metrics import roc_auc; print(roc_auc([1, 1], [0.2, 0.3]))`], { encoding: 'utf8' });
    expect(out.trim()).toBe('nan');
    expect(rocAuc([1, 1], [0.2, 0.3])).toBeNaN();
  });
});
