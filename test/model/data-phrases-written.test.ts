// Written wording for the relationship banks (phrases-written.ts): lines written blind to the
// generator and the excerpt sets, drawn by the train split only, by both classes (a parent's care
// aside, which only benign families say), never a held-out phrasing, and off unless asked for.
import { describe, expect, it } from 'vitest';
import { contactTestSlice, courtshipSlice } from '../../scripts/data/contact.ts';
import { buildCorpus, testSplitOf } from '../../scripts/data/corpus.ts';
import { allSwitches } from '../../scripts/data/generate.ts';
import * as C from '../../scripts/data/phrases-contact.ts';
import * as P from '../../scripts/data/phrases.ts';
import { TRAINING_PHRASINGS } from '../../scripts/data/phrases-training.ts';
import { WRITTEN_BANKS, WRITTEN_WORDING, writtenWording } from '../../scripts/data/phrases-written.ts';
import { BANKS, grams, heldOutOverlaps, linesOf } from '../helpers/phrasings.ts';

const written = [...WRITTEN_WORDING.values()].flat();
const swOn = { ...allSwitches(true), writtenWording: writtenWording() };
/** The lines with no slot to fill, lower-cased as linesOf reads a chat's turns: what a chat says whole. */
const sayable = (lines: readonly string[]): string[] => lines.filter((p) => !p.includes('{')).map((p) => p.toLowerCase());

describe('data: written wording of the relationship banks', () => {
  it("repeats no phrasing of any bank or of the training phrasings, nor four words in a row of a held-out one, nor three of its own bank's", () => {
    const all = new Set([...BANKS.flat(), ...[...TRAINING_PHRASINGS.values()].flat()]);
    expect(written.filter((p) => all.has(p))).toEqual([]);
    expect(new Set(written).size).toBe(written.length);
    expect(heldOutOverlaps(WRITTEN_WORDING)).toEqual({ four: [], within: [], ownThree: [] });
  });

  it('states no age: no digit, and only the slots the generator fills', () => {
    expect(written.filter((p) => /\d/.test(p))).toEqual([]);
    const slots = new Set(written.flatMap((p) => [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1])));
    expect([...slots].filter((s) => s === undefined || P.SLOTS[s] === undefined || s.startsWith('age'))).toEqual([]);
  });

  it('is longer than the banks it joins, as written messages are', () => {
    const mean = (xs: readonly string[]): number => xs.reduce((n, p) => n + grams(p, 1).length, 0) / xs.length;
    for (const [bank, lines] of WRITTEN_WORDING) {
      expect(lines.length).toBeGreaterThanOrEqual(20);
      expect(mean(lines)).toBeGreaterThan(mean(bank) * 1.5);
    }
  });

  it("extends relationship banks only, each drawn by both classes but a parent's care, which stays benign", () => {
    const relationship = new Set<readonly string[]>(TRAINING_PHRASINGS.keys());
    expect([...WRITTEN_WORDING.keys()].every((b) => relationship.has(b))).toBe(true);
    const records = courtshipSlice(7, 1500, swOn).filter((r) => r.split === 'train');
    const saidBy = (label: 0 | 1): Set<string>[] => records.filter((r) => r.label === label).map((r) => linesOf([r]));
    const said = { 0: saidBy(0), 1: saidBy(1) };
    const share = (lines: readonly string[], label: 0 | 1): number => {
      const plain = sayable(lines);
      return said[label].filter((record) => plain.some((p) => record.has(p))).length / said[label].length;
    };
    for (const [bank, lines] of WRITTEN_WORDING) {
      expect(share(lines, 0)).toBeGreaterThan(0.01);
      if (bank === C.PARENT_CARE) expect(share(lines, 1)).toBe(0);
      else expect(share(lines, 1)).toBeGreaterThan(0.01);
    }
  });

  it('reaches the train split only: validation, test and the contact proxies never say one', () => {
    const records = courtshipSlice(7, 3000, swOn);
    const plain = sayable(written);
    const train = linesOf(records.filter((r) => r.split === 'train'));
    const held = linesOf(records.filter((r) => r.split !== 'train'));
    expect(plain.filter((p) => train.has(p)).length).toBeGreaterThan(plain.length / 2);
    expect(plain.filter((p) => held.has(p))).toEqual([]);
    const proxies = linesOf(contactTestSlice(7, 500, swOn));
    expect(plain.filter((p) => proxies.has(p))).toEqual([]);
  });

  it('goes to the banks named and no other (corpus.ts --written-banks), and refuses a name it has no lines for', () => {
    expect(writtenWording().size).toBe(WRITTEN_BANKS.length);
    const lives = writtenWording(['CHILD_LIFE', 'ADULT_LIFE']);
    expect([...lives.keys()]).toEqual([C.CHILD_LIFE, C.ADULT_LIFE]);
    const records = courtshipSlice(7, 1500, { ...allSwitches(true), writtenWording: lives }).filter((r) => r.split === 'train');
    const said = linesOf(records);
    const plainOf = (bank: readonly string[]): string[] => sayable(WRITTEN_WORDING.get(bank) ?? []);
    expect(plainOf(C.CHILD_LIFE).some((p) => said.has(p))).toBe(true);
    expect(plainOf(C.ADULT_LIFE).some((p) => said.has(p))).toBe(true);
    expect(plainOf(C.RL_AFFECTION).filter((p) => said.has(p))).toEqual([]);
    expect(() => writtenWording(['CHILD_LIF'])).toThrow(/no written lines for CHILD_LIF/);
  });

  it('leaves the corpus as it was unless asked for, and its test split as it was when asked for', () => {
    const o = { seed: 5, n: 200, real: false, synthetic: true, dataDir: '', jsonl: [], courtship: 200 };
    const lines = (rs: readonly { id: string; split: string; conversation: string }[]): string[] => rs.map((r) => `${r.id} ${r.split} ${r.conversation}`);
    const unasked = buildCorpus(o);
    expect(lines(buildCorpus({ ...o, writtenWording: false }))).toEqual(lines(unasked));
    const asked = buildCorpus({ ...o, writtenWording: true });
    expect(lines(asked)).not.toEqual(lines(unasked));
    // Validation shares the train split's random stream (slots drawn for the new lines move it), so it
    // is other chats in the same families, none of them saying a written line (above).
    expect(lines(asked.filter((r) => r.split === 'test'))).toEqual(lines(testSplitOf(o)));
  });
});
