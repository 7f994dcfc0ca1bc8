import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explain, runningByPiece, traceTurns } from '../../../src/scoring/explain.ts';
import { createScorer, type EngineScorer } from '../../../src/scoring/scorer.ts';

const FIXTURE = join(import.meta.dirname, '../../fixtures/contract-model');
const WORDS = 'hello school games music friend secret photo alone tonight camera parents phone meet car party'.split(' ');

/** A chat of `turns` turns whose wording varies with the turn index, so its running score moves. */
function chat(turns: number): string {
  return Array.from({ length: turns }, (_, i) => {
    const words = Array.from({ length: 1 + (i % 5) }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ');
    return `user${(i % 2) + 1}: ${words}`;
  }).join('\n');
}

describe('running scores from the per-piece outputs of one pass', () => {
  it('takes the maximum of the full earlier segments and the current segment cut at the piece', () => {
    const running = runningByPiece([Float64Array.from([0.1, 0.3, 0.2]), Float64Array.from([0.05, 0.6, 0.4])]);
    // Not a running maximum: a segment's score after its third piece may be lower than after its second.
    expect(Array.from(running).map((x) => Number(x.toFixed(4)))).toEqual([0.1, 0.3, 0.2, 0.2, 0.6, 0.4]);
  });

  it('gives a turn with no token yet the start score and a later turn the score at its last piece', () => {
    const trace = traceTurns(
      [
        { line: 0, speaker: 'user1', lastPiece: -1 },
        { line: 2, speaker: 'user2', lastPiece: 1 },
      ],
      Float64Array.from([0.2, 0.7]),
      0.05,
    );
    expect(trace).toEqual({ start: 0.05, turns: [{ line: 0, speaker: 'user1', score: 0.05 }, { line: 2, speaker: 'user2', score: 0.7 }] });
  });
});

describe('explain: first alert and evidence', () => {
  it('puts the first alert at the first score above 0.5, not at 0.5 itself', () => {
    expect(explain([0.1, 0.5, 0.51, 0.9], ['user1', 'user2', 'user1', 'user2'], 0).first_alert_index).toBe(2);
    expect(explain([0.1, 0.5], ['user1', 'user2'], 0).first_alert_index).toBeNull();
  });

  it('lists at most five rises, strongest first, each with its author, and never a fall', () => {
    const scores = [0.1, 0.05, 0.3, 0.36, 0.9, 0.8, 0.87, 0.97, 0.98, 0.99];
    const users = scores.map((_, i) => (i % 2 === 0 ? 'user1' : 'user2') as 'user1' | 'user2');
    const { evidence } = explain(scores, users, 0.02);
    // Rises: 0 +0.08, 2 +0.25, 3 +0.06, 4 +0.54, 6 +0.07, 7 +0.10, 8 +0.01, 9 +0.01; falls at 1 and 5.
    expect(evidence.map((e) => e.index)).toEqual([4, 2, 7, 0, 6]);
    expect(evidence[0]).toEqual({ index: 4, user: 'user1', weight: expect.closeTo(0.54, 10) });
    expect(evidence[3]!.weight).toBeCloseTo(0.08, 10);
    expect(evidence.every((e) => e.weight > 0)).toBe(true);
  });
});

describe('the engine explains in one pass (contract fixture model in onnxruntime)', () => {
  let scorer: EngineScorer;
  beforeAll(async () => {
    scorer = await createScorer({ modelDir: FIXTURE, workers: 1, intraOpThreads: 1, maxQueue: 64, timeoutMs: 20_000 });
  });
  afterAll(async () => {
    await scorer.close();
  });

  it('answers without an explanation unless asked, and the same score either way', async () => {
    const [plain, explained] = await scorer.score([{ conversation: chat(12) }, { conversation: chat(12), explain: true }]);
    expect(plain!.explanation).toBeUndefined();
    expect(explained!.harmful_score).toBeCloseTo(plain!.harmful_score, 6);
    expect(explained!.explanation!.turns).toHaveLength(12);
  });

  it('ends on the score itself and matches every prefix scored alone, across segment boundaries', async () => {
    // 150 turns with max_turns 64: three segments, so prefixes cross both boundaries.
    const conversation = chat(150);
    const [whole] = await scorer.score([{ conversation, explain: true, age_a: '14', age_b: '35' }]);
    const turns = whole!.explanation!.turns;
    expect(turns).toHaveLength(150);
    expect(turns.at(-1)!.score).toBe(whole!.harmful_score);
    const lines = conversation.split('\n');
    const cuts = [1, 2, 5, 63, 64, 65, 100, 128, 129, 149];
    const prefixes = await scorer.score(cuts.map((n) => ({ conversation: lines.slice(0, n).join('\n'), age_a: '14', age_b: '35' })));
    cuts.forEach((n, k) => expect(Math.abs(turns[n - 1]!.score - prefixes[k]!.harmful_score)).toBeLessThan(1e-4));
    // The running score moves across these prefixes, so one constant trace could not match them all.
    const atCuts = cuts.map((n) => turns[n - 1]!.score);
    expect(Math.max(...atCuts) - Math.min(...atCuts)).toBeGreaterThan(0.05);
  });

  it('keeps segments in conversation order when several conversations share a task (batches are sorted by shape)', async () => {
    const long = chat(150);
    const [together] = await scorer.score([{ conversation: long, explain: true }, { conversation: chat(3) }, { conversation: chat(70), explain: true }]);
    const [alone] = await scorer.score([{ conversation: long, explain: true }]);
    const a = together!.explanation!.turns.map((t) => t.score);
    const b = alone!.explanation!.turns.map((t) => t.score);
    for (let i = 0; i < a.length; i++) expect(Math.abs(a[i]! - b[i]!)).toBeLessThan(1e-4);
    const lines = long.split('\n');
    const [prefix] = await scorer.score([{ conversation: lines.slice(0, 30).join('\n') }]);
    expect(Math.abs(a[29]! - prefix!.harmful_score)).toBeLessThan(1e-4);
    expect(Math.max(...a) - Math.min(...a)).toBeGreaterThan(0.05);
  });

  it('locates every turn by the line where it starts, continuation lines included', async () => {
    const [p] = await scorer.score([{ conversation: 'user1: hi\nthere\n\nuser2: hello\nuser1: games', explain: true }]);
    expect(p!.explanation!.turns.map((t) => [t.line, t.speaker])).toEqual([
      [0, 'user1'],
      [3, 'user2'],
      [4, 'user1'],
    ]);
  });

  it('splits a long turn into pieces and still reads its score at the turn end', async () => {
    const long = Array.from({ length: 100 }, (_, i) => WORDS[i % WORDS.length]).join(' ');
    const conversation = `user1: hello\nuser2: ${long}\nuser1: music`;
    const [p] = await scorer.score([{ conversation, explain: true }]);
    const [cut] = await scorer.score([{ conversation: conversation.split('\n').slice(0, 2).join('\n') }]);
    expect(Math.abs(p!.explanation!.turns[1]!.score - cut!.harmful_score)).toBeLessThan(1e-4);
    // ...and not the score after the first turn or the last: each turn has a score of its own here.
    const [first] = await scorer.score([{ conversation: 'user1: hello' }]);
    expect(Math.abs(p!.explanation!.turns[1]!.score - first!.harmful_score)).toBeGreaterThan(1e-3);
    expect(Math.abs(p!.explanation!.turns[1]!.score - p!.harmful_score)).toBeGreaterThan(1e-3);
  });
});
