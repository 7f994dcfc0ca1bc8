import { describe, expect, it } from 'vitest';
import {
  aggregateSegments,
  calibrate,
  confidence,
  isHarmful,
  predatoryUser,
  preview,
  riskLevel,
  sigmoid,
  softmax3,
} from '../../../src/scoring/aggregate.ts';

describe('risk bands are half-open', () => {
  it.each([
    [0, 'Safe'],
    [0.19999999, 'Safe'],
    [0.2, 'Low Risk'],
    [0.39999, 'Low Risk'],
    [0.4, 'Medium Risk'],
    [0.5, 'Medium Risk'],
    [0.6, 'High Risk'],
    [0.79999, 'High Risk'],
    [0.8, 'Critical'],
    [1, 'Critical'],
  ] as const)('%f is %s', (score, band) => {
    expect(riskLevel(score)).toBe(band);
  });
});

describe('is_harmful is score > 0.5', () => {
  it('0.5 is not harmful, just above is', () => {
    expect(isHarmful(0.5)).toBe(false);
    expect(isHarmful(0.5000001)).toBe(true);
    expect(isHarmful(0)).toBe(false);
  });
});

describe('calibration and softmax', () => {
  it('applies p = sigmoid(logit / temperature + bias)', () => {
    expect(calibrate(0, { method: 'temperature', temperature: 1, bias: 0 })).toBe(0.5);
    expect(calibrate(2, { method: 'temperature', temperature: 2, bias: 0.5 })).toBeCloseTo(sigmoid(1.5), 12);
  });
  it('sigmoid is stable for large logits', () => {
    expect(sigmoid(1000)).toBe(1);
    expect(sigmoid(-1000)).toBe(0);
  });
  it('softmax sums to 1 and is stable', () => {
    const s = softmax3(1000, 999, -1000);
    expect(s[0] + s[1] + s[2]).toBeCloseTo(1, 12);
    expect(s[0]).toBeGreaterThan(s[1]);
  });
});

describe('aggregation over segments', () => {
  it('takes the maximum harm: one harmful stretch makes the conversation harmful', () => {
    const a = aggregateSegments([
      { p: 0.1, s: [1, 0, 0] },
      { p: 0.9, s: [0, 1, 0] },
    ]);
    expect(a.harmfulScore).toBe(0.9);
  });
  it('splits the harm between the sides by speaker output weighted by segment harm (w = p + 1e-6)', () => {
    const a = aggregateSegments([
      { p: 0.1, s: [1, 0, 0] },
      { p: 0.9, s: [0, 1, 0] },
    ]);
    // Side shares 0.1 : 0.9 of the conversation's harm 0.9; neither is what the score leaves.
    expect(a.userProbabilities.user1).toBeCloseTo(0.09, 5);
    expect(a.userProbabilities.user2).toBeCloseTo(0.81, 5);
    expect(a.userProbabilities.neither).toBeCloseTo(0.1, 12);
  });
  it("makes neither exactly 1 - harmful_score, whatever the model's own neither class says", () => {
    // A calibrated score above 0.5 with the model's neither class dominant: the flagged chat still
    // names the side the speaker output leans to.
    const a = aggregateSegments([{ p: 0.7, s: [0.3, 0.05, 0.65] }]);
    expect(a.userProbabilities.neither).toBeCloseTo(0.3, 12);
    expect(a.userProbabilities.user1).toBeCloseTo((0.7 * 0.3) / 0.35, 12);
    expect(predatoryUser(a.userProbabilities)).toBe('user1');
  });
  it('names nobody when no segment is harmful', () => {
    const a = aggregateSegments([
      { p: 0, s: [1, 0, 0] },
      { p: 0, s: [0, 0, 1] },
    ]);
    expect(a.harmfulScore).toBe(0);
    expect(a.userProbabilities.neither).toBe(1);
    expect(predatoryUser(a.userProbabilities)).toBe('neither');
  });
  it('user probabilities sum to 1', () => {
    const a = aggregateSegments([
      { p: 0.3, s: softmax3(0.1, 0.7, -2) },
      { p: 0.6, s: softmax3(2, -1, 0.3) },
      { p: 0.01, s: softmax3(0, 0, 0) },
    ]);
    const u = a.userProbabilities;
    expect(u.user1 + u.user2 + u.neither).toBeCloseTo(1, 12);
  });
  it('refuses zero segments', () => {
    expect(() => aggregateSegments([])).toThrow(RangeError);
  });
  it('for flat text (speakers unknown) splits the harm evenly and names nobody, however the sides lean', () => {
    const a = aggregateSegments([{ p: 0.9, s: [0.85, 0.05, 0.1] }], false);
    expect(a.harmfulScore).toBe(0.9);
    expect(a.userProbabilities.user1).toBeCloseTo(0.45, 12);
    expect(a.userProbabilities.user2).toBeCloseTo(0.45, 12);
    expect(a.userProbabilities.neither).toBeCloseTo(0.1, 12);
    expect(predatoryUser(a.userProbabilities, false)).toBe('neither');
    expect(predatoryUser(a.userProbabilities, true)).toBe('user1');
  });
});

describe('predatory_user is the largest; ties go to neither, then user1', () => {
  it('picks the largest', () => {
    expect(predatoryUser({ user1: 0.2, user2: 0.5, neither: 0.3 })).toBe('user2');
    expect(predatoryUser({ user1: 0.6, user2: 0.2, neither: 0.2 })).toBe('user1');
  });
  it('breaks ties toward neither, then user1', () => {
    expect(predatoryUser({ user1: 0.4, user2: 0.2, neither: 0.4 })).toBe('neither');
    expect(predatoryUser({ user1: 1 / 3, user2: 1 / 3, neither: 1 / 3 })).toBe('neither');
    expect(predatoryUser({ user1: 0.45, user2: 0.45, neither: 0.1 })).toBe('user1');
  });
});

describe('confidence = sqrt(|2p-1| * (1 - H(users)/ln 3))', () => {
  it('is 1 for a certain score and a certain attribution', () => {
    expect(confidence(1, { user1: 1, user2: 0, neither: 0 })).toBe(1);
    expect(confidence(0, { user1: 0, user2: 0, neither: 1 })).toBe(1);
  });
  it('is 0 at a score of 0.5 or with a uniform attribution', () => {
    expect(confidence(0.5, { user1: 1, user2: 0, neither: 0 })).toBe(0);
    expect(confidence(0.99, { user1: 1 / 3, user2: 1 / 3, neither: 1 / 3 })).toBeCloseTo(0, 9);
  });
  it('matches the formula in between and stays in [0,1]', () => {
    const u = { user1: 0.7, user2: 0.2, neither: 0.1 };
    const h = -(0.7 * Math.log(0.7) + 0.2 * Math.log(0.2) + 0.1 * Math.log(0.1));
    expect(confidence(0.8, u)).toBeCloseTo(Math.sqrt(0.6 * (1 - h / Math.log(3))), 12);
  });
});

describe('conversation_preview is the first 500 code points', () => {
  it('returns a short text whole', () => {
    expect(preview('hello')).toBe('hello');
  });
  it('cuts at 500 code points', () => {
    expect(preview('a'.repeat(600))).toBe('a'.repeat(500));
  });
  it('never splits a surrogate pair and counts a pair as one character', () => {
    const text = '😀'.repeat(600);
    const p = preview(text);
    expect(Array.from(p)).toHaveLength(500);
    expect(p).toBe('😀'.repeat(500));
    const mixed = `${'a'.repeat(499)}😀bc`;
    expect(preview(mixed)).toBe(`${'a'.repeat(499)}😀`);
  });
  it('matches Array.from for mixed text, including a lone surrogate', () => {
    const text = `x\uD800y${'é😀中'.repeat(300)}`;
    expect(preview(text)).toBe(Array.from(text).slice(0, 500).join(''));
  });
  it('reads only the head of a 500,000-character text', () => {
    const text = 'b'.repeat(500_000);
    expect(preview(text)).toHaveLength(500);
  });
});
