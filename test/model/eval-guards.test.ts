// Unit tests of the evaluation's shortcut guards (no model): the structure-only baseline detects
// structure that differs between classes and only that; the short-chat sets are as promised.
import { curveOf, onsetLatency } from '../../scripts/eval/early.ts';
import { describe, expect, it } from 'vitest';
import { turnOfLine } from '../../scripts/data/export.ts';
import { RECUTS, turnsOf } from '../../scripts/data/recut.ts';
import { createRng, hash32, type Rng } from '../../scripts/data/rng.ts';
import { STRUCTURE_FEATURES, structureBaselineAuc, structureFeatures, type StructureExample } from '../../scripts/eval/structure-baseline.ts';
import { ISSUE_EXAMPLES, SHORT_BENIGN_MIN, SHORT_PREDATORY_MIN, shortBenignChats, shortPredatoryChats } from '../../scripts/eval/short-chats.ts';
import { deterministicSubsample } from '../../scripts/eval/harness.ts';
import { recutChanges, stabilityRow } from '../../scripts/eval/recut-invariance.ts';
import { hasSpeakerPrefixes, sliceRow, tagSlices } from '../../scripts/eval/slices.ts';
import { atThreshold, cutAtFpr, prAuc } from '../../scripts/eval/metrics.ts';
import type { LabeledConversation } from '../../scripts/data/record.ts';
import { COLUMNS, ablationMarkdown, parseRow } from '../../scripts/eval/ablation.ts';
import {
  SPARSE_COUNTS,
  SPARSE_LINES,
  SPARSE_MIN_TURNS,
  SPARSE_MOVE_REPEATS,
  SPARSE_LENGTH_BANDS,
  evaluateSparseGrooming,
  evaluateSparseMoves,
  lengthBandKey,
  lengthBandLabel,
  movesRecognised,
  recallByLength,
  render,
  sparseMoveChats,
  sparsePairs,
} from '../../scripts/eval/sparse-grooming.ts';
import { generate } from '../../scripts/data/generate.ts';
import { LONG_TALK_INSERTED, LONG_TALK_LENGTHS, LONG_TALK_LINES, LONG_TALK_POOL, MENTION_LINES, evaluateLongSmallTalk, longTalkChats } from '../../scripts/eval/long-small-talk.ts';
import type { Prediction, ScoreRequest } from '../../src/scoring/types.ts';
import * as PHRASES from '../../scripts/data/phrases.ts';

const WORDS = ['school', 'game', 'pizza', 'secret', 'photo', 'parents', 'meet', 'weekend', 'cool', 'home', 'music', 'phone', 'later', 'friend'];

function words(rng: Rng, n: number): string {
  return Array.from({ length: n }, () => rng.pick(WORDS)).join(' ');
}

/** A chat with `turns` turns of about `len` words each, speakers alternating. */
function chat(rng: Rng, turns: number, len: number): string {
  return Array.from({ length: turns }, (_, i) => `user${(i % 2) + 1}: ${words(rng, Math.max(1, len + rng.int(-1, 1)))}`).join('\n');
}

/** Class 1: many short turns; class 0: few long turns. Same word pool, so only structure differs. */
function structuredCorpus(seed: number, n: number): StructureExample[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, i) => {
    const label = i % 2;
    return { label, conversation: label === 1 ? chat(rng, rng.int(14, 20), 3) : chat(rng, rng.int(3, 6), 14) };
  });
}

/** Both classes drawn from the same structural distribution. */
function sameStructureCorpus(seed: number, n: number): StructureExample[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, i) => ({ label: i % 2, conversation: chat(rng, rng.int(2, 20), rng.int(2, 12)) }));
}

describe('structure-only baseline (target: test ROC-AUC <= 0.65 on the real corpus)', () => {
  it('has one value per named feature and reads no words', () => {
    const a = structureFeatures('user1: hi there\nuser2: hello');
    const b = structureFeatures('user1: yo where\nuser2: howdy');
    expect(a).toHaveLength(STRUCTURE_FEATURES.length);
    expect(a.every(Number.isFinite)).toBe(true);
    // Same layout and character classes, different words: identical features.
    expect(b).toEqual(a);
  });

  it('separates a toy corpus whose classes differ only in structure (AUC near 1)', () => {
    const r = structureBaselineAuc(structuredCorpus(1, 400), structuredCorpus(2, 400));
    expect(r.roc_auc).toBeGreaterThan(0.95);
    expect(r.features).toEqual([...STRUCTURE_FEATURES]);
  });

  it('does not separate a toy corpus whose structure is the same across classes (AUC near 0.5)', () => {
    const r = structureBaselineAuc(sameStructureCorpus(3, 600), sameStructureCorpus(4, 600));
    expect(Math.abs(r.roc_auc - 0.5)).toBeLessThan(0.08);
  });

  it('is deterministic', () => {
    const a = structureBaselineAuc(structuredCorpus(5, 200), sameStructureCorpus(6, 200));
    const b = structureBaselineAuc(structuredCorpus(5, 200), sameStructureCorpus(6, 200));
    expect(b).toEqual(a);
  });

  it('reads speaker prefixes through parseTurns (flat text has none)', () => {
    const idx = STRUCTURE_FEATURES.indexOf('share_lines_with_prefix');
    expect(structureFeatures('user1: hi\nuser2: hey')[idx]).toBe(1);
    expect(structureFeatures('hi hey how are you')[idx]).toBe(0);
    expect(hasSpeakerPrefixes('mom: home by 9\nok')).toBe(true);
    expect(hasSpeakerPrefixes('meet me at 12:30 http://x.y')).toBe(false);
  });
});

describe('short chats (hand-written, never trained on)', () => {
  it(`has at least ${SHORT_BENIGN_MIN} distinct benign chats of 1-4 turns and ${SHORT_PREDATORY_MIN}+ predatory openers`, () => {
    const benign = shortBenignChats();
    const predatory = shortPredatoryChats();
    expect(benign.length).toBeGreaterThanOrEqual(SHORT_BENIGN_MIN);
    expect(predatory.length).toBeGreaterThanOrEqual(SHORT_PREDATORY_MIN);
    expect(new Set(benign.map((c) => c.conversation)).size).toBe(benign.length);
    expect(new Set(predatory.map((c) => c.conversation)).size).toBe(predatory.length);
    for (const c of [...benign, ...predatory]) {
      const lines = c.conversation.split('\n');
      expect(lines.length).toBeGreaterThanOrEqual(1);
      expect(lines.length).toBeLessThanOrEqual(4);
      expect(hasSpeakerPrefixes(c.conversation)).toBe(true);
    }
    expect(benign.every((c) => c.label === 0 && c.predator === 'neither')).toBe(true);
    expect(predatory.every((c) => c.label === 1 && (c.predator === 'user1' || c.predator === 'user2'))).toBe(true);
    // The predator is on each side in some openers.
    expect(predatory.some((c) => c.predator === 'user1') && predatory.some((c) => c.predator === 'user2')).toBe(true);
  });

  it('is deterministic', () => {
    expect(shortBenignChats()).toEqual(shortBenignChats());
    expect(shortPredatoryChats()).toEqual(shortPredatoryChats());
  });

  it("contains the issue's own examples verbatim", () => {
    const texts = new Set(shortBenignChats().map((c) => c.conversation));
    for (const c of ['user1: hi', 'user1: hi\nuser2: hello', 'user1: lol\nuser2: lmao', 'user1: ok\nuser2: ok', ...ISSUE_EXAMPLES]) {
      expect(texts.has(c), c).toBe(true);
    }
  });
});

describe('re-cut and slice helpers', () => {
  it('stabilityRow counts moves strictly under 0.15 and passes at 90 %', () => {
    const orig = Array.from({ length: 10 }, () => 0.1);
    const row = stabilityRow('x', [1, 0, 1, 0, 1, 0, 1, 0, 1, 0], orig, [...Array.from({ length: 9 }, () => 0.2), 0.9], true);
    expect(row.share_stable).toBeCloseTo(0.9);
    expect(row.pass).toBe(true);
    expect(stabilityRow('y', [1, 0], [0, 0], [0.15, 0], true).share_stable).toBe(0.5);
  });

  it('stabilityRow also reports the share over the conversations the re-cut changed', () => {
    // Two unchanged conversations (stable by construction) and two changed ones, one of them moved.
    const row = stabilityRow('z', [1, 0, 1, 0], [0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.9], true, [false, false, true, true]);
    expect(row.share_stable).toBe(0.75);
    expect(row.changed).toBe(2);
    expect(row.share_stable_changed).toBe(0.5);
  });

  it('recutChanges compares the turns the model reads, not the raw text', () => {
    expect(recutChanges('hi there how are you', RECUTS.flat('hi there how are you'))).toBe(false);
    expect(recutChanges('user1: hi\nuser2: hello', RECUTS.merge_runs('user1: hi\nuser2: hello'))).toBe(false);
    expect(recutChanges('user1: hi\nuser1: again\nuser2: hello', RECUTS.merge_runs('user1: hi\nuser1: again\nuser2: hello'))).toBe(true);
    expect(recutChanges('user1: one two three four five', RECUTS.split4('user1: one two three four five'))).toBe(true);
    expect(recutChanges('user1: hi\nuser2: hello', RECUTS.flat('user1: hi\nuser2: hello'))).toBe(true);
    // Whitespace inside a turn only separates words: a re-cut that merely normalises it changes nothing.
    expect(recutChanges('user1: hi  there\t you\nuser2: hello ', RECUTS.merge_runs('user1: hi  there\t you\nuser2: hello '))).toBe(false);
  });

  it('deterministicSubsample is order-independent', () => {
    const recs = Array.from({ length: 50 }, (_, i) => ({ id: `r${i}` }));
    const a = deterministicSubsample(recs, 10).map((r) => r.id);
    const b = deterministicSubsample([...recs].reverse(), 10).map((r) => r.id);
    expect(a).toEqual(b);
    expect(a).toHaveLength(10);
  });

  it('tag slices handle absent tags and one-class slices', () => {
    const rec = (id: string, label: 0 | 1, tags?: string[]): LabeledConversation => ({
      id,
      conversation: 'user1: hi',
      label,
      predator: label ? 'user1' : 'neither',
      family: 'f',
      split: 'test',
      source: 'generator',
      ...(tags ? { tags } : {}),
    });
    const test = [rec('a', 1, ['flat']), rec('b', 1, ['flat']), rec('c', 0), rec('d', 0)];
    const scores = [0.9, 0.4, 0.2, 0.6];
    const rows = tagSlices(test, scores);
    const flat = rows.find((r) => r.slice === 'flat');
    expect(flat?.conversations).toBe(2);
    expect(flat?.auc_against).toBe('all test benign');
    expect(flat?.roc_auc).toBeCloseTo(0.75);
    expect(flat?.recall_at_0_5).toBe(0.5);
    expect(rows.find((r) => r.slice === 'in-kind')?.conversations).toBe(0);
    expect(sliceRow('all', [0, 1, 2, 3], test, scores).fpr_at_0_5).toBe(0.5);
  });

  it('cutAtFpr is the lowest cut that flags no more than the given share of negatives, ties included', () => {
    const negatives = Array.from({ length: 20 }, (_, i) => i / 20);
    const labels = [...negatives.map(() => 0), 1, 1];
    const scores = [...negatives, 0.99, 0.5];
    const cut = cutAtFpr(labels, scores, 0.05);
    expect(cut).toBe(0.9);
    expect(atThreshold(labels, scores, cut).fpr).toBe(0.05);
    expect(atThreshold(labels, scores, cut - 1e-9).fpr).toBeGreaterThan(0.05);
    expect(atThreshold(labels, scores, cut).recall).toBe(0.5);
    const tied = cutAtFpr([0, 0, 0, 0], [0.9, 0.9, 0.9, 0.1], 0.5);
    expect(atThreshold([0, 0, 0, 0], [0.9, 0.9, 0.9, 0.1], tied).fpr).toBeLessThanOrEqual(0.5);
    expect(cutAtFpr([1, 1], [0.3, 0.4], 0.05)).toBeNaN();
  });
});

describe('ablation table', () => {
  it('parses "label=path" rows, labels with commas included', () => {
    expect(parseRow('wordpiece, random init=reports/ablation/wp/eval.json')).toEqual({ label: 'wordpiece, random init', path: 'reports/ablation/wp/eval.json' });
    expect(() => parseRow('no-path')).toThrow(/label=path/);
  });

  it('writes one row per run, marks missed targets and unmeasured figures', () => {
    const md = ablationMarkdown([
      { label: 'a', report: { metrics: { roc_auc: 0.99, structure_baseline_roc_auc: 0.9, recut_min_share_stable: 0.95, register_shift_roc_auc: null } } },
      { label: 'b', report: { metrics: {} } },
    ]);
    const rows = md.split('\n').filter((l) => l.startsWith('| a') || l.startsWith('| b'));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain('| 0.99 |');
    expect(rows[0]).toContain('0.9 ✗');
    expect(rows[0]).toContain('| 0.95 |');
    expect(rows[1]?.split('|').filter((c) => /^n\/a( \/ n\/a)?$/.test(c.trim())).length).toBe(COLUMNS.length);
  });
});

describe('average precision', () => {
  it('steps through the ranking as scikit-learn does, and treats tied scores as one threshold whatever their order', () => {
    // Precision 1/1 at the first positive, 2/3 at the second: (1 + 2/3) / 2.
    expect(prAuc([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])).toBeCloseTo(5 / 6, 12);
    expect(prAuc([1, 0], [0.5, 0.5])).toBe(0.5);
    expect(prAuc([0, 1], [0.5, 0.5])).toBe(0.5);
    expect(prAuc([0, 0], [0.5, 0.4])).toBeNaN();
  });
});

describe('early detection: the eSPD latency curve from first alerts', () => {
  it('counts a chat detected at a read share once its first alert lies within that many messages', () => {
    const g = curveOf([
      { turns: 10, first: 0 },
      { turns: 10, first: 4 },
      { turns: 100, first: 49 },
      { turns: 4, first: null },
    ]);
    expect(g.alerted).toBe(3);
    const at = (read: number) => g.curve.find((c) => c.read === read)!.detected;
    expect(at(0.1)).toBe(0.25);
    expect(at(0.5)).toBe(0.75);
    expect(at(1)).toBe(0.75);
    // Shares read at the alert: 0.1, 0.5, 0.5 -> median 0.5; indices 0, 4, 49 -> median 4.
    expect(g.median_first_alert_share).toBe(0.5);
    expect(g.median_first_alert_index).toBe(4);
  });

  it('counts a one-message chat (a flat export) detected only once all of it is read', () => {
    const g = curveOf([{ turns: 1, first: 0 }, { turns: 3, first: 0 }]);
    const at = (read: number) => g.curve.find((c) => c.read === read)!.detected;
    expect(at(0.1)).toBe(0);
    expect(at(0.5)).toBe(0.5);
    expect(at(1)).toBe(1);
  });

  it("finds the onset's turn: the last turn starting at or before the onset line (continuation lines belong to it)", () => {
    const lines = [0, 1, 3, 6];
    expect(turnOfLine(lines, 0)).toBe(0);
    expect(turnOfLine(lines, 2)).toBe(1);
    expect(turnOfLine(lines, 3)).toBe(2);
    expect(turnOfLine(lines, 9)).toBe(3);
    expect(turnOfLine([2], 1)).toBeUndefined();
  });

  it('measures the lag from the onset to the alert, and counts alerts on the benign prefix before it apart', () => {
    const o = onsetLatency([
      { turns: 50, first: 10, onset: 10 },
      { turns: 50, first: 14, onset: 10 },
      { turns: 50, first: 40, onset: 10 },
      { turns: 50, first: 3, onset: 10 },
      { turns: 50, first: null, onset: 10 },
      { turns: 50, first: 2 },
    ]);
    expect(o.conversations).toBe(5);
    expect(o.alerted_before_onset).toBe(0.2);
    expect(o.alerted_after_onset).toBe(0.6);
    // Lags 0, 4, 30.
    expect(o.median_messages_after_onset).toBe(4);
    expect(o.alerted_within_10).toBe(0.4);
  });
});

describe('sparse grooming in real chats: hand-written lines inserted into held-out real benign chats', () => {
  const rng = createRng(3);
  const host = (id: string, turns: number, tags: string[] = []): LabeledConversation => ({
    id, conversation: chat(rng, turns, 6), label: 0, predator: 'neither', family: 'topical-chat', split: 'test', source: 'topical-chat', tags,
  });
  const test = [
    ...Array.from({ length: 30 }, (_, i) => host(`h${i}`, 24, i % 2 ? ['chat-register'] : [])),
    host('short', SPARSE_MIN_TURNS - 1),
    host('flat', 24, ['flat']),
    { ...host('generated', 24), source: 'generator' },
  ];

  it.each(SPARSE_COUNTS)('adds exactly %i distinct lines, all from one speaker, and leaves the host otherwise untouched', (k) => {
    for (const p of sparsePairs(test, k)) {
      expect(p.groomed.length).toBe(p.turns.length + k);
      const added = p.groomed.filter((t) => !p.turns.includes(t));
      expect(added).toHaveLength(k);
      expect(new Set(added.map((t) => t.text)).size).toBe(k);
      for (const t of added) expect([SPARSE_LINES.includes(t.text), t.speaker]).toEqual([true, p.predator]);
      expect(p.groomed.filter((t) => p.turns.includes(t))).toEqual(p.turns);
      expect(p.groomed[0]).toBe(p.turns[0]);
    }
  });

  it('takes only real benign chats as written (no rendering but chat register) of at least the minimum length', () => {
    const ids = sparsePairs(test, 3).map((p) => p.id);
    expect(ids).toHaveLength(30);
    expect(ids).not.toContain('short');
    expect(ids).not.toContain('flat');
    expect(ids).not.toContain('generated');
  });

  it('is deterministic', () => {
    expect(sparsePairs(test, 5)).toEqual(sparsePairs([...test].reverse(), 5));
  });

  it('renders flat text with no speaker prefix, on one line or one message per line', () => {
    const [p] = sparsePairs(test, 3);
    expect(render(p!.groomed, 'flat one line')).not.toMatch(/\n|user[12]: /);
    expect(render(p!.groomed, 'flat lines').split('\n')).toEqual(p!.groomed.map((t) => t.text));
    expect(render(p!.groomed, 'speakers').split('\n')[0]).toBe(`${p!.groomed[0]!.speaker}: ${p!.groomed[0]!.text}`);
  });

  it("renders merged runs with inserted lines joined to their speaker's turns beside them", () => {
    const [p] = sparsePairs(test, 5);
    const merged = turnsOf(render(p!.groomed, 'merged runs'));
    expect(merged.every((t, i) => i === 0 || t.speaker !== merged[i - 1]!.speaker)).toBe(true);
    expect(merged.map((t) => t.text).join(' ')).toBe(p!.groomed.map((t) => t.text).join(' '));
    // Where the host alternates, an inserted line lands beside one of its speaker's own turns and joins
    // it (one inserted at the very end can land beside the other speaker).
    const predatory = p!.groomed.filter((t) => SPARSE_LINES.includes(t.text)).map((t) => t.text);
    expect(merged.filter((t) => predatory.includes(t.text)).length).toBeLessThan(predatory.length);
  });

  it('says one move alone a few times by one speaker, leaving the host otherwise untouched', () => {
    const line = SPARSE_LINES[5] as string;
    const chats = sparseMoveChats(test, line);
    expect(chats.map((c) => c.id)).toEqual(sparsePairs(test, 3).map((p) => p.id));
    for (const c of chats) {
      const added = c.groomed.filter((t) => !c.turns.includes(t));
      expect(added).toEqual(Array.from({ length: SPARSE_MOVE_REPEATS }, () => ({ speaker: c.predator, text: line })));
      expect(c.groomed.filter((t) => c.turns.includes(t))).toEqual(c.turns);
      expect(c.groomed[0]).toBe(c.turns[0]);
    }
    expect(new Set(chats.map((c) => c.predator))).toEqual(new Set(['user1', 'user2']));
    // Every line goes to the same places, by the same speaker: the lines' rows are paired.
    const other = sparseMoveChats(test, SPARSE_LINES[9] as string);
    const places = (cs: typeof chats): number[][] => cs.map((c) => c.groomed.flatMap((t, i) => (c.turns.includes(t) ? [] : [i])));
    expect(places(other)).toEqual(places(chats));
    expect(other.map((c) => c.predator)).toEqual(chats.map((c) => c.predator));
    expect(sparseMoveChats([...test].reverse(), line)).toEqual(chats);
    expect(() => sparseMoveChats(test, 'hello there')).toThrow(/not a sparse line/);
  });

  it('reports, per move and rendering, the share of its chats flagged, and counts the moves that flag half of them', async () => {
    // A stand-in scorer that reads one move, and only with speaker prefixes.
    const scorer = {
      score: async (requests: ScoreRequest[]): Promise<Prediction[]> =>
        requests.map((r) => ({ harmful_score: r.conversation.includes(SPARSE_LINES[0] as string) && /^user[12]: /m.test(r.conversation) ? 0.9 : 0.2 }) as Prediction),
    };
    const rows = await evaluateSparseMoves(scorer, test);
    expect(rows).toHaveLength(SPARSE_LINES.length * 2);
    const flagged = rows.filter((r) => r.flagged > 0);
    expect(flagged.map((r) => [r.line, r.rendering, r.flagged])).toEqual([[SPARSE_LINES[0], 'speakers', 1]]);
    expect(flagged[0]?.mean_score).toBeCloseTo(0.9);
    expect(rows.find((r) => r.line === SPARSE_LINES[0] && r.rendering === 'flat one line')?.mean_score).toBeCloseTo(0.2);
    expect([movesRecognised(rows, 'speakers'), movesRecognised(rows, 'flat one line')]).toEqual([1, 0]);
    expect(await evaluateSparseMoves(scorer, [])).toEqual([]);
  });

  it('reports recall at the host cut, where 5 % of the untouched real hosts are flagged, beside recall at 0.5 and at the flat cut', async () => {
    // A stand-in scorer: hosts spread over [0, 0.4) by a hash of their text, groomed chats at 0.45.
    const scorer = {
      score: async (requests: ScoreRequest[]): Promise<Prediction[]> =>
        requests.map((r) => ({ harmful_score: SPARSE_LINES.some((l) => r.conversation.includes(l)) ? 0.45 : ((hash32(r.conversation) % 1000) / 1000) * 0.4 }) as Prediction),
    };
    // A flat cut of 0.42 (between the hosts and the groomed chats) flags every groomed chat; 0.5 none.
    const rows = await evaluateSparseGrooming(scorer, test, 0.42);
    expect(rows).toHaveLength(SPARSE_COUNTS.length * 4);
    for (const r of rows) {
      expect(r.pairs).toBe(30);
      expect([r.recall_at_0_5, r.recall_at_flat_cut, r.fpr_at_flat_cut, r.recall_at_host_cut]).toEqual([0, 1, 0, 1]);
      expect(r.host_cut).toBeLessThan(0.4);
      expect(r.recall_by_length.reduce((n, b) => n + b.chats, 0)).toBe(30);
    }
    // The host cut flags no more than 5 % of the hosts, and is the lowest such cut: one step lower flags more.
    const p = sparsePairs(test, 5);
    const hostScores = (await scorer.score(p.map((x) => ({ conversation: render(x.turns, 'speakers') })))).map((x) => x.harmful_score);
    const cut = rows.find((r) => r.lines === 5 && r.rendering === 'speakers')?.host_cut ?? Number.NaN;
    expect(hostScores.filter((x) => x > cut).length).toBeLessThanOrEqual(0.05 * hostScores.length);
    expect(hostScores.filter((x) => x >= cut).length).toBeGreaterThan(0.05 * hostScores.length);
  });

  it('splits recall at 0.5 by the chat\'s length into bands, each closed below and open above; an empty band is NaN', () => {
    expect(SPARSE_LENGTH_BANDS).toEqual([0, 1500, 2500]);
    const bands = recallByLength([100, 1499, 1500, 2499, 2500, 9000], [0.9, 0.1, 0.9, 0.9, 0.5, 0.51]);
    expect(bands.map((b) => [b.min_characters, b.below_characters, b.chats, b.recall_at_0_5])).toEqual([[0, 1500, 2, 0.5], [1500, 2500, 2, 1], [2500, null, 2, 0.5]]);
    expect(bands.map(lengthBandLabel)).toEqual(['under 1,500', '1,500 to 2,499', '2,500 or more']);
    expect(bands.map(lengthBandKey)).toEqual(['chars_0_1499', 'chars_1500_2499', 'chars_2500_plus']);
    expect(recallByLength([10], [0.9]).map((b) => b.chats)).toEqual([1, 0, 0]);
    expect(Number.isNaN(recallByLength([10], [0.9])[2]?.recall_at_0_5)).toBe(true);
    expect(() => recallByLength([10, 20], [0.9])).toThrow(/2 lengths for 1 scores/);
  });

  it("uses lines that the generator never writes, so the slice measures more than the generator's phrase banks", () => {
    const text = generate({ seed: 7, n: 3000 }).map((r) => r.conversation.toLowerCase()).join('\n');
    expect(SPARSE_LINES.filter((l) => text.includes(l))).toEqual([]);
  });
});

describe('long repeated small talk slice', () => {
  const chats = longTalkChats();

  it('repeats a few everyday lines per chat, for 60 to 300 messages, both sides writing', () => {
    for (const c of chats) {
      const lines = new Set(c.turns.map((t) => t.text));
      expect(lines.size).toBeLessThanOrEqual(LONG_TALK_POOL.max);
      for (const l of lines) expect(LONG_TALK_LINES).toContain(l);
      expect(LONG_TALK_LENGTHS).toContain(c.turns.length);
      expect(new Set(c.turns.map((t) => t.speaker))).toEqual(new Set(['user1', 'user2']));
    }
    expect(new Set(chats.map((c) => c.turns.length)).size).toBe(LONG_TALK_LENGTHS.length);
  });

  it('adds exactly one benign mention, or the sparse predatory lines by one speaker, to the same chat', () => {
    for (const c of chats) {
      const mention = c.mentioned.filter((t) => !c.turns.includes(t));
      expect(mention).toHaveLength(1);
      expect(MENTION_LINES).toContain(mention[0]?.text);
      expect(c.mentioned.filter((t) => c.turns.includes(t))).toEqual(c.turns);
      const added = c.groomed.filter((t) => !c.turns.includes(t));
      expect(added).toHaveLength(LONG_TALK_INSERTED);
      for (const t of added) expect([SPARSE_LINES.includes(t.text), t.speaker]).toEqual([true, c.predator]);
    }
  });

  it('is deterministic', () => {
    expect(longTalkChats()).toEqual(chats);
  });

  it('counts flagged chats per variant and ranks the mentions by how much they raise their chats', async () => {
    // A stand-in scorer that reads one word: 0.9 for any chat with "snap", 0.1 otherwise.
    const scorer = {
      score: async (requests: ScoreRequest[]): Promise<Prediction[]> =>
        requests.map((r) => ({ harmful_score: r.conversation.includes('snap') ? 0.9 : 0.1 }) as Prediction),
    };
    const rows = await evaluateLongSmallTalk(scorer);
    const snapChats = chats.filter((c) => c.mention.includes('snap')).length;
    const mention = rows.filter((r) => r.variant === 'one everyday mention');
    expect(snapChats).toBeGreaterThan(0);
    for (const r of mention) {
      expect(r.flagged).toBeCloseTo(snapChats / chats.length);
      expect(r.top_mentions?.slice(0, 2).map((m) => m.line).sort()).toEqual(['add me on snap', 'whats ur snap']);
      expect(r.top_mentions?.[0]?.mean_rise).toBeCloseTo(0.8);
    }
    expect(rows.filter((r) => r.variant === 'untouched').map((r) => r.flagged)).toEqual([0, 0]);
    expect(rows).toHaveLength(6);
  });

  it('takes its mentions from no phrase bank, slots filled in any way, so no model has been trained on them as written', () => {
    const escape = (t: string): string => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const templates = Object.values(PHRASES).flatMap((v) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []));
    // Each bank line as a pattern, a slot matching any of its fillers, as Ctx.fill fills them: the
    // age with a number, a slot with no fillers with its own name.
    const patterns = templates.map((t) => new RegExp(`^${t.toLowerCase().split(/(\{\w+\})/).map((part) => {
      const slot = /^\{(\w+)\}$/.exec(part)?.[1];
      if (slot === undefined) return escape(part);
      if (slot === 'age') return '\\d+';
      const fillers = PHRASES.SLOTS[slot] ?? [slot];
      return `(?:${fillers.map((f) => escape(f.toLowerCase())).join('|')})`;
    }).join('')}$`));
    expect(patterns.length).toBeGreaterThan(1000);
    expect(MENTION_LINES.filter((l) => patterns.some((p) => p.test(l)))).toEqual([]);
    // The check finds a bank line when there is one.
    expect(patterns.some((p) => p.test('whats ur @ on snap'))).toBe(true);
  });
});
