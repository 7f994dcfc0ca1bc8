// POST /batch_predict: order, mixed item forms, limits and the whole-batch 422 for one invalid item.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, chat, startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { WORKERS: '2' } });
});
afterAll(async () => t.close());

const batch = (payload: unknown) =>
  t.app.inject({ method: 'POST', url: '/batch_predict', payload: payload as object, headers: bearer() });
const predictOne = async (body: object) =>
  (await t.app.inject({ method: 'POST', url: '/predict', payload: body, headers: bearer() })).json();

describe('POST /batch_predict', () => {
  it('answers predictions in input order, each equal to the /predict answer for that item', async () => {
    const items = [
      chat(3, 1),
      { conversation: chat(200, 2), age_a: '40', age_b: '13' },
      chat(1, 3),
      { conversation: chat(9, 4) },
      `user1: ${'ok '.repeat(3000)}`,
    ];
    const res = await batch({ conversations: items });
    expect(res.statusCode).toBe(200);
    const { predictions } = res.json();
    expect(predictions).toHaveLength(items.length);
    for (const [i, item] of items.entries()) {
      const single = await predictOne(typeof item === 'string' ? { conversation: item } : item);
      // Batched segments are padded together; the contract allows 1e-4 of padding noise.
      const { user_probabilities: up, harmful_score, confidence, ...rest } = predictions[i];
      const { user_probabilities: _up, harmful_score: _h, confidence: _c, ...singleRest } = single;
      expect(rest).toEqual(singleRest);
      expect(harmful_score).toBeCloseTo(single.harmful_score, 4);
      expect(confidence).toBeCloseTo(single.confidence, 4);
      for (const k of ['user1', 'user2', 'neither']) expect(up[k]).toBeCloseTo(single.user_probabilities[k], 4);
    }
    expect(res.headers['x-model-version']).toMatch(/@/);
  });

  it('accepts 100 items and refuses 101 with 422', async () => {
    const hundred = Array.from({ length: 100 }, (_, i) => chat(2, i));
    expect((await batch({ conversations: hundred })).statusCode).toBe(200);
    const res = await batch({ conversations: [...hundred, 'user1: one more'] });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toBe('conversations: must hold at most 100 items');
  });

  it('refuses an empty or missing list with 422', async () => {
    expect((await batch({ conversations: [] })).json().detail).toBe('conversations: must hold at least 1 item(s)');
    expect((await batch({})).json().detail).toBe('conversations: is required');
  });

  it('answers 422 for the whole batch naming the index of the one invalid item', async () => {
    const cases: Array<[unknown, string]> = [
      ['', 'conversations[2]: must not be empty'],
      [{ conversation: '' }, 'conversations[2].conversation: must not be empty'],
      [{ age_a: '12' }, 'conversations[2].conversation: is required'],
      [{ conversation: 'user1: hi', extra: 1 }, 'conversations[2]: unknown field "extra"'],
      [7, 'conversations[2]: must be object'],
      ['x'.repeat(500_001), 'conversations[2]: must be at most 500000 characters'],
    ];
    for (const [bad, detail] of cases) {
      const res = await batch({ conversations: ['user1: a', 'user2: b', bad, 'user1: c'] });
      expect(res.statusCode).toBe(422);
      expect(res.json().detail).toBe(detail);
    }
  });

  it('answers 422 naming the item index and field for an invalid age', async () => {
    const res = await batch({ conversations: ['user1: a', { conversation: 'user1: b', age_b: 'old' }] });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/^conversations\[1\]\.age_b /);
  });
});
