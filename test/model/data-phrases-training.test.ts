// More wording for the relationship banks (phrases-training.ts): drawn by the train split only, by
// both classes (a parent's care aside, which only benign families say), never a held-out phrasing,
// and off unless a recipe asks for it.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { contactTestSlice, courtshipSlice } from '../../scripts/data/contact.ts';
import { buildCorpus, testSplitOf } from '../../scripts/data/corpus.ts';
import { allSwitches } from '../../scripts/data/generate.ts';
import * as C from '../../scripts/data/phrases-contact.ts';
import { TRAINING_PHRASINGS } from '../../scripts/data/phrases-training.ts';
import { BANKS, heldOutOverlaps, linesOf } from '../helpers/phrasings.ts';

const extras = [...TRAINING_PHRASINGS.values()].flat();

describe('data: training-only phrasings of the relationship banks', () => {
  it("repeat no phrasing of any bank, nor four words in a row of a held-out one, nor three of their own bank's", () => {
    const all = new Set(BANKS.flat());
    expect(extras.filter((p) => all.has(p))).toEqual([]);
    expect(new Set(extras).size).toBe(extras.length);
    expect(heldOutOverlaps(TRAINING_PHRASINGS)).toEqual({ four: [], within: [], ownThree: [] });
  });

  it("extend relationship banks only, each drawn by both classes but a parent's care, which stays benign", () => {
    const relationship = new Set<readonly string[]>([C.CHILD_LIFE, C.ADULT_LIFE, C.PARENT_CARE, C.RL_AFFECTION, C.RL_AFFECTION_REPLY, C.RL_CARE, C.RL_CARE_REPLY, C.RL_CALL, C.RL_CALL_REPLY, C.RL_PLANS, C.RL_PLANS_REPLY, C.RL_GIFT, C.RL_GIFT_REPLY, C.RL_JEALOUS, C.RL_JEALOUS_REPLY]);
    expect([...TRAINING_PHRASINGS.keys()].every((b) => relationship.has(b))).toBe(true);
    const records = courtshipSlice(7, 1500, { ...allSwitches(true), trainingPhrasings: true }).filter((r) => r.split === 'train');
    // Each record's lines, parsed once for every bank's count below.
    const said = (label: 0 | 1): Set<string>[] => records.filter((r) => r.label === label).map((r) => linesOf([r]));
    const saidBy = { 0: said(0), 1: said(1) };
    /** Share of `label`'s records that say one of `lines` whole. */
    const share = (lines: readonly string[], label: 0 | 1): number => {
      const plain = lines.filter((p) => !p.includes('{'));
      const rs = saidBy[label];
      return rs.filter((record) => plain.some((p) => record.has(p))).length / rs.length;
    };
    for (const [bank, lines] of TRAINING_PHRASINGS) {
      expect(share(lines, 0)).toBeGreaterThan(0.01);
      if (bank === C.PARENT_CARE) expect(share(lines, 1)).toBe(0);
      else expect(share(lines, 1)).toBeGreaterThan(0.01);
    }
    expect(share(extras, 0)).toBeGreaterThan(0.2);
    expect(share(extras, 1)).toBeGreaterThan(0.2);
  });

  it('reach the train split only: validation and test records never say one', () => {
    const records = courtshipSlice(7, 3000, { ...allSwitches(true), trainingPhrasings: true });
    const plain = extras.filter((p) => !p.includes('{') && p.split(' ').length >= 3);
    const train = linesOf(records.filter((r) => r.split === 'train'));
    const held = linesOf(records.filter((r) => r.split !== 'train'));
    expect(plain.filter((p) => train.has(p)).length).toBeGreaterThan(plain.length / 2);
    expect(plain.filter((p) => held.has(p))).toEqual([]);
    // The contact proxies the eval scores are test-split chats of every contact family.
    const proxies = linesOf(contactTestSlice(7, 500, { ...allSwitches(true), trainingPhrasings: true }));
    expect(plain.filter((p) => proxies.has(p))).toEqual([]);
  });

  it('leave the corpus as it was unless asked for, and its test split as it was when asked for', () => {
    const o = { seed: 5, n: 200, real: false, synthetic: true, dataDir: '', jsonl: [], courtship: 200 };
    const lines = (rs: readonly { id: string; conversation: string }[]): string[] => rs.map((r) => `${r.id} ${r.conversation}`);
    // This corpus's hash before phrases-training.ts existed (commit 31d4be1).
    const hash = (rs: readonly { id: string; label: number; split: string; conversation: string }[]): string =>
      createHash('sha256').update(rs.map((r) => `${r.id} ${r.label} ${r.split} ${r.conversation}`).join('\n')).digest('hex');
    const unasked = buildCorpus(o);
    expect(hash(unasked)).toBe('b31bd68f2500f130b61c700249779b40ec08d77cbf934f830c034812968e22fc');
    expect(lines(buildCorpus({ ...o, phrasings: false }))).toEqual(lines(unasked));
    const asked = buildCorpus({ ...o, phrasings: true });
    expect(lines(asked)).not.toEqual(lines(unasked));
    expect(lines(asked.filter((r) => r.split === 'test'))).toEqual(lines(testSplitOf(o)));
  });
});
