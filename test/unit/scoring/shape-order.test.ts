import { describe, expect, it } from 'vitest';
import type { ModelItem } from '../../../src/scoring/inference.ts';
import { paddedTokens, sortByShape } from '../../../src/scoring/shape-order.ts';

/** An item of `turns` pieces, the longest `longest` tokens. */
const item = (turns: number, longest: number): ModelItem => ({
  segment: { inputIds: Array.from({ length: turns }, (_, t) => Array.from({ length: t === 0 ? longest : 1 }, () => 5)), speakerIds: Array.from({ length: turns }, () => 1) },
  ageFeatures: [],
});

describe('sortByShape: segments go to the model grouped by shape', () => {
  it('orders items by turns then longest piece, their owners and positions moving with them', () => {
    const items = [item(3, 2), item(1, 8), item(3, 1), item(1, 2)];
    const owners = [0, 1, 2, 3];
    const positions = [10, 11, 12, 13];
    sortByShape(items, owners, positions);
    expect(items.map((i) => [i.segment.inputIds.length, paddedTokens(i.segment)])).toEqual([
      [1, 2],
      [1, 8],
      [3, 3],
      [3, 6],
    ]);
    expect(owners).toEqual([3, 1, 2, 0]);
    expect(positions).toEqual([13, 11, 12, 10]);
  });

  it('sorts 600,000 segments (a large /batch_predict body) without overflowing the argument limit', () => {
    const shared = [item(1, 1), item(2, 1)];
    const n = 600_000;
    const items = Array.from({ length: n }, (_, i) => shared[i % 2] as ModelItem);
    const owners = Array.from({ length: n }, (_, i) => i);
    const positions = Array.from({ length: n }, (_, i) => i);
    expect(() => sortByShape(items, owners, positions)).not.toThrow();
    expect(items).toHaveLength(n);
    expect(items[n / 2 - 1]?.segment.inputIds.length).toBe(1);
    expect(items[n / 2]?.segment.inputIds.length).toBe(2);
    expect(owners[0]! % 2).toBe(0);
    expect(owners[n - 1]! % 2).toBe(1);
  });
});
