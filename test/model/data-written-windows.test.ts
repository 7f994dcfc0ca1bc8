// Whole relationship windows written blind (written-windows.ts): the train split only, off unless asked
// for, apart from the evaluation's written sets and from every held-out phrasing of the generator; a
// second and a third batch read only when a recipe asks for them.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildCorpus } from '../../scripts/data/corpus.ts';
import { loadWrittenWindows } from '../../scripts/data/written-windows.ts';
import { loadWrittenExcerpts } from '../../scripts/eval/written-excerpts.ts';
import { HELD_OUT, grams } from '../helpers/phrasings.ts';
import { breaksHeldOutPhrasing, expectChatsOfBothClasses, sharesWithEvaluation } from '../helpers/written-chats.ts';

const windows = loadWrittenWindows();
const both = loadWrittenWindows(2);
const second = both.slice(windows.length);
const all = loadWrittenWindows(3);
const third = all.slice(both.length);
// Every batch is held to the rules below.
const lines = all.flatMap((w) => w.turns.map(([, text]) => text));

describe('data: relationship windows written blind', () => {
  it('are windows of both classes as the brief asks: sides A and B both speak, a harmful one names the adult, the adult on either side', () => {
    expectChatsOfBothClasses(windows, { minTurns: 4, maxTurns: 24, minHarmful: 40 });
    expectChatsOfBothClasses(second, { minTurns: 4, maxTurns: 24, minHarmful: 40 });
    expectChatsOfBothClasses(third, { minTurns: 4, maxTurns: 24, minHarmful: 40 });
  });

  it('read the first batch (writers 1 to 8) unless asked for more, and then the second (writers 9 to 14) after it, repeating none of the first', () => {
    expect(both.slice(0, windows.length)).toEqual(windows);
    expect(new Set(windows.map((w) => w.writer))).toEqual(new Set([1, 2, 3, 4, 5, 6, 7, 8]));
    expect(new Set(second.map((w) => w.writer))).toEqual(new Set([9, 10, 11, 12, 13, 14]));
    const first = new Set(windows.map((w) => JSON.stringify(w.turns)));
    expect(second.filter((w) => first.has(JSON.stringify(w.turns)))).toEqual([]);
  });

  it('read the third batch (writers 15 to 20) only when asked for three, after the first two, repeating neither', () => {
    expect(all.slice(0, both.length)).toEqual(both);
    expect(new Set(third.map((w) => w.writer))).toEqual(new Set([15, 16, 17, 18, 19, 20]));
    const earlier = new Set(both.map((w) => JSON.stringify(w.turns)));
    expect(third.filter((w) => earlier.has(JSON.stringify(w.turns)))).toEqual([]);
  });

  it.each([0, 4, 1.5, Number.NaN])('refuse a number of batches the folders do not hold (%s), in the reader and in the corpus alike', (batches) => {
    expect(() => loadWrittenWindows(batches)).toThrow(/batches from 1 to 3/);
    // Even with no copies asked for, so a mistyped count is not silently ignored.
    expect(() => buildCorpus({ seed: 5, n: 20, real: false, synthetic: true, dataDir: '', jsonl: [], writtenWindowBatches: batches })).toThrow(/batches from 1 to 3/);
  });

  it('share no run of six words with any excerpt of the written evaluation sets, the held-back set included', () => {
    const shares = sharesWithEvaluation();
    expect(lines.filter(shares)).toEqual([]);
    // The rule can fail: an evaluation line planted in a window's line is caught.
    const planted = loadWrittenExcerpts('selection').flatMap((e) => e.turns.map(([, text]) => text)).find((t) => grams(t, 6).length > 0);
    expect(shares(`ok so ${planted}`)).toBe(true);
  });

  // Narrower than the bank lines' rule (test/helpers/written-chats.ts breaksHeldOutPhrasing).
  it('hold no held-out phrasing of a generator bank: no four words in a row of one, none of three words or more whole', () => {
    const breaks = breaksHeldOutPhrasing();
    expect(lines.filter(breaks)).toEqual([]);
    // The rule can fail: held-out phrasings planted in a line, of four words and of three, are caught.
    const plain = HELD_OUT.filter((p) => !p.includes('{'));
    expect(breaks(`${plain.find((p) => grams(p, 1).length >= 4)} ok`)).toBe(true);
    expect(breaks(`well ${plain.find((p) => grams(p, 1).length === 3)} then`)).toBe(true);
  });

  // 3.16.0's recipe trains on them (WRITTEN_WINDOWS=3, WRITTEN_WINDOWS_FLAT=3), so `npm run train` reproduces
  // the shipped model only while they stay as they are: new windows belong in a set a new recipe names.
  it('are the 262 windows 3.16.0 was trained on, unchanged (95 courtships, 167 benign twins)', () => {
    expect([windows.length, windows.filter((w) => w.label === 1).length]).toEqual([262, 95]);
    expect(createHash('sha256').update(JSON.stringify(windows)).digest('hex')).toBe('e3a6e561ab93e69c5d55e94a4a3a3ee19843440fae2d59b97649969e0179982d');
  });

  // Frozen as the first batch is, so the measures taken with it (docs/training.md) stay the measures of these files.
  it('hold a second batch of 215 windows as filtered on December 7, unchanged (96 courtships, 119 benign twins)', () => {
    expect([second.length, second.filter((w) => w.label === 1).length]).toEqual([215, 96]);
    expect(createHash('sha256').update(JSON.stringify(second)).digest('hex')).toBe('964bfb05f0b99d1000d16736ae194484d1a7c1573ee579446d68112ead515665');
  });

  // Frozen as the first two are: candidate 3.18.0-rc2 was trained on it, so its measures (docs/training.md)
  // stay the measures of these files.
  it('hold a third batch of 286 windows as filtered on December 7, unchanged (142 courtships, 144 benign twins)', () => {
    expect([third.length, third.filter((w) => w.label === 1).length]).toEqual([286, 142]);
    expect(createHash('sha256').update(JSON.stringify(third)).digest('hex')).toBe('c3526dd688b8b5dd0100c1aac49bf78661b01d34237813de5fc56d8bbd4665b1');
  });

  it('say nothing sexual', () => {
    expect(lines.filter((text) => /\b(sex\w*|nudes?|naked|horny|boobs?|dick|penis|vagina|bra)\b/i.test(text))).toEqual([]);
  });

  it('reach the corpus only when asked for, as that many copies of each in the train split, then as many flat as asked, after every other record', () => {
    const o = { seed: 5, n: 200, real: false, synthetic: true, dataDir: '', jsonl: [], courtship: 100 };
    const text = (rs: readonly { id: string; split: string; conversation: string }[]): string[] => rs.map((r) => `${r.id} ${r.split} ${r.conversation}`);
    const unasked = buildCorpus(o);
    expect(text(buildCorpus({ ...o, writtenWindows: 0 }))).toEqual(text(unasked));
    const asked = buildCorpus({ ...o, writtenWindows: 3 });
    expect(text(asked.slice(0, unasked.length))).toEqual(text(unasked));
    const added = asked.slice(unasked.length);
    expect(added).toHaveLength(3 * windows.length);
    expect(new Set(added.map((r) => r.split))).toEqual(new Set(['train']));
    expect(new Set(added.map((r) => r.id)).size).toBe(added.length);
    // Each copy says its window's turns, A as user1, and names the adult's side as the window does.
    const side = { A: 'user1', B: 'user2', neither: 'neither' } as const;
    windows.forEach((w, k) => {
      const rendered = w.turns.map(([s, t]) => `${side[s]}: ${t}`).join('\n');
      for (let c = 0; c < 3; c++) expect(added[k * 3 + c]).toMatchObject({ conversation: rendered, label: w.label, predator: side[w.predator] });
    });
    // Flat copies follow each window's copies with speakers: its words in order, no speaker, tagged flat.
    const withFlat = buildCorpus({ ...o, writtenWindows: 1, writtenWindowsFlat: 2 }).slice(unasked.length);
    expect(withFlat).toHaveLength(3 * windows.length);
    windows.forEach((w, k) => {
      const [spoken, ...flat] = withFlat.slice(k * 3, k * 3 + 3);
      expect(spoken).toMatchObject({ label: w.label, predator: side[w.predator] });
      expect(spoken?.tags).toBeUndefined();
      for (const f of flat) {
        expect(f).toMatchObject({ conversation: w.turns.map(([, t]) => t).join(' '), label: w.label, split: 'train', tags: ['flat'] });
        expect(f.conversation).not.toMatch(/user[12]:/);
      }
    });
    expect(buildCorpus({ ...o, writtenWindowsFlat: 1 }).slice(unasked.length)).toHaveLength(windows.length);
    expect(() => buildCorpus({ ...o, writtenWindows: -1 })).toThrow(/whole number of copies/);
    expect(() => buildCorpus({ ...o, writtenWindows: 2, writtenWindowsFlat: 1.5 })).toThrow(/whole number of flat copies/);
  });

  it('with two or three batches asked for, make each batch\'s copies after the one before, in the same form, every id its own', () => {
    const o = { seed: 5, n: 200, real: false, synthetic: true, dataDir: '', jsonl: [], courtship: 100 };
    const text = (rs: readonly { id: string; split: string; conversation: string }[]): string[] => rs.map((r) => `${r.id} ${r.split} ${r.conversation}`);
    const unasked = buildCorpus(o);
    const side = { A: 'user1', B: 'user2', neither: 'neither' } as const;
    expect(text(buildCorpus({ ...o, writtenWindows: 3, writtenWindowBatches: 1 }))).toEqual(text(buildCorpus({ ...o, writtenWindows: 3 })));
    const twice = buildCorpus({ ...o, writtenWindows: 1, writtenWindowsFlat: 1, writtenWindowBatches: 2 }).slice(unasked.length);
    expect(twice).toHaveLength(2 * both.length);
    expect(twice.slice(0, 2 * windows.length)).toEqual(buildCorpus({ ...o, writtenWindows: 1, writtenWindowsFlat: 1 }).slice(unasked.length));
    second.forEach((w, k) => {
      const [spoken, flat] = twice.slice(2 * (windows.length + k), 2 * (windows.length + k) + 2);
      expect(spoken).toMatchObject({ id: `written-window-${w.writer}-${w.index}-0`, label: w.label, predator: side[w.predator], split: 'train' });
      expect(flat).toMatchObject({ conversation: w.turns.map(([, t]) => t).join(' '), label: w.label, tags: ['flat'] });
    });
    expect(new Set(twice.map((r) => r.id)).size).toBe(twice.length);
    // Three batches: the first two's records, then the third's, each id its own.
    const thrice = buildCorpus({ ...o, writtenWindows: 1, writtenWindowBatches: 3 }).slice(unasked.length);
    expect(thrice).toHaveLength(all.length);
    expect(text(thrice.slice(0, both.length))).toEqual(text(buildCorpus({ ...o, writtenWindows: 1, writtenWindowBatches: 2 }).slice(unasked.length)));
    third.forEach((w, k) => {
      expect(thrice[both.length + k]).toMatchObject({ id: `written-window-${w.writer}-${w.index}-0`, label: w.label, predator: side[w.predator], split: 'train' });
    });
    expect(new Set(thrice.map((r) => r.id)).size).toBe(thrice.length);
  });
});
