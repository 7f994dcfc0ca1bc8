import { describe, expect, it } from 'vitest';
import { CancelledError, MicroBatcher } from '../../../src/scoring/batcher.ts';

const lim = (maxItems: number) => ({ maxItems, maxCost: Number.POSITIVE_INFINITY, cost: () => 1 });

describe('MicroBatcher: segments of concurrent tasks share model runs', () => {
  it('returns each item its own output, in order', async () => {
    const b = new MicroBatcher(async (xs: number[]) => xs.map((x) => x * 10), lim(4));
    expect(await b.submit([1, 2, 3, 4, 5, 6], () => false)).toEqual([10, 20, 30, 40, 50, 60]);
  });

  it('merges items submitted together into one run, capped at maxBatch, taking from each task in turn', async () => {
    const runs: number[][] = [];
    const b = new MicroBatcher(async (xs: number[]) => {
      runs.push(xs);
      return xs;
    }, lim(3));
    await Promise.all([b.submit([1, 2], () => false), b.submit([3], () => false), b.submit([4, 5], () => false)]);
    expect(runs).toEqual([
      [1, 3, 4],
      [2, 5],
    ]);
  });

  it("a task submitted after a long one rides in the next run, not after all of the long one's items", async () => {
    const runs: number[][] = [];
    const b = new MicroBatcher(async (xs: number[]) => {
      runs.push(xs);
      await new Promise((r) => setTimeout(r, 1));
      return xs;
    }, lim(4));
    const long = b.submit(Array.from({ length: 40 }, (_, i) => i), () => false);
    await new Promise((r) => setTimeout(r, 3));
    const small = await b.submit([1000], () => false);
    expect(small).toEqual([1000]);
    // The small task's item went in one of the first runs after it arrived, while the long one had most to go.
    const at = runs.findIndex((r) => r.includes(1000));
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(4);
    expect((await long).length).toBe(40);
    expect(runs.flat().filter((x) => x < 1000)).toEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it('caps the total cost of a run, but always runs at least one item', async () => {
    const runs: number[][] = [];
    const b = new MicroBatcher(
      async (xs: number[]) => {
        runs.push(xs);
        return xs;
      },
      { maxItems: 100, maxCost: 10, cost: (x: number) => x },
    );
    await b.submit([4, 5, 2, 30, 1], () => false);
    expect(runs).toEqual([[4, 5], [2], [30], [1]]);
  });

  it('runs one batch at a time', async () => {
    let running = 0;
    let most = 0;
    const b = new MicroBatcher(async (xs: number[]) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 2));
      running--;
      return xs;
    }, lim(2));
    await Promise.all([b.submit([1, 2, 3], () => false), b.submit([4, 5, 6], () => false)]);
    expect(most).toBe(1);
  });

  it('skips the items of a cancelled task and rejects it with CancelledError', async () => {
    const seen: number[] = [];
    const b = new MicroBatcher(async (xs: number[]) => {
      seen.push(...xs);
      return xs;
    }, lim(2));
    let cancelled = false;
    const first = b.submit([1, 2], () => false);
    const second = b.submit([3, 4, 5], () => cancelled);
    cancelled = true;
    await expect(first).resolves.toEqual([1, 2]);
    await expect(second).rejects.toBeInstanceOf(CancelledError);
    expect(seen).toEqual([1, 2]);
  });

  it('rejects the tasks in a failed run and keeps serving the next ones', async () => {
    let fail = true;
    const b = new MicroBatcher(async (xs: number[]) => {
      if (fail) throw new Error('model failed');
      return xs;
    }, lim(8));
    await expect(b.submit([1], () => false)).rejects.toThrow('model failed');
    fail = false;
    await expect(b.submit([2], () => false)).resolves.toEqual([2]);
  });
});
