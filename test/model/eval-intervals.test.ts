// The intervals the evaluation prints beside its proxies' figures (scripts/eval/metrics.ts): Wilson's
// for a share, Hanley and McNeil's for a ROC-AUC. Checked against published values and by how often
// they hold the true value over draws whose truth is known.
import { describe, expect, it } from 'vitest';
import { rocAuc, rocAucInterval, wilsonInterval } from '../../scripts/eval/metrics.ts';
import { createRng } from '../../scripts/data/rng.ts';

describe('Wilson interval of a share', () => {
  it("gives Newcombe's (1998) interval for 81 of 263: 0.2553 to 0.3662", () => {
    const [lo, hi] = wilsonInterval(81, 263);
    expect(lo).toBeCloseTo(0.2553, 4);
    expect(hi).toBeCloseTo(0.3662, 4);
  });

  it('is not empty at none or all of n, and stays inside 0 to 1', () => {
    expect(wilsonInterval(0, 10)).toEqual([0, expect.closeTo(1.96 ** 2 / (10 + 1.96 ** 2), 12)]);
    const [lo, hi] = wilsonInterval(10, 10);
    expect(hi).toBe(1);
    expect(lo).toBeCloseTo(1 - 1.96 ** 2 / (10 + 1.96 ** 2), 12);
    expect(wilsonInterval(0, 0).every(Number.isNaN)).toBe(true);
  });

  it('holds a 5 % share of 65 chats in about 95 % of draws', () => {
    const rng = createRng(32);
    let held = 0;
    for (let r = 0; r < 2000; r++) {
      let k = 0;
      for (let i = 0; i < 65; i++) if (rng.chance(0.05)) k++;
      const [lo, hi] = wilsonInterval(k, 65);
      if (lo <= 0.05 && 0.05 <= hi) held++;
    }
    expect(held / 2000).toBeGreaterThan(0.93);
    expect(held / 2000).toBeLessThan(0.98);
  });
});

describe('Hanley and McNeil interval of a ROC-AUC', () => {
  it('uses their standard error: at 0.5 with 50 of each class it is sqrt((1/4 + 98/12) / 2500)', () => {
    const [lo, hi] = rocAucInterval(0.5, 50, 50);
    expect((hi - lo) / (2 * 1.96)).toBeCloseTo(Math.sqrt((0.25 + 98 / 12) / 2500), 12);
  });

  it('is clipped to 1 for a perfect ranking, and NaN with one class', () => {
    expect(rocAucInterval(1, 20, 30)).toEqual([1, 1]);
    expect(rocAucInterval(0.8, 0, 30).every(Number.isNaN)).toBe(true);
  });

  it('holds the true ROC-AUC of two unit normals one apart (0.760) in about 95 % of draws of 80 and 120', () => {
    const rng = createRng(33);
    const normal = (): number => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
    const labels = [...Array<number>(80).fill(1), ...Array<number>(120).fill(0)];
    let held = 0;
    for (let r = 0; r < 1000; r++) {
      const scores = labels.map((y) => normal() + y);
      const [lo, hi] = rocAucInterval(rocAuc(labels, scores), 80, 120);
      if (lo <= 0.7602 && 0.7602 <= hi) held++;
    }
    expect(held / 1000).toBeGreaterThan(0.92);
    expect(held / 1000).toBeLessThan(0.98);
  });
});
