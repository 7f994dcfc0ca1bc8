// First contacts between strangers written blind (written-contacts.ts): the train split only, off unless
// asked for, after the windows, apart from the evaluation's written sets and from every held-out phrasing
// of the generator.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildCorpus } from '../../scripts/data/corpus.ts';
import { loadWrittenContacts } from '../../scripts/data/written-contacts.ts';
import { loadWrittenWindows } from '../../scripts/data/written-windows.ts';
import { HELD_BACK_SETS, loadWrittenExcerpts } from '../../scripts/eval/written-excerpts.ts';
import { HELD_OUT, grams } from '../helpers/phrasings.ts';
import { breaksHeldOutPhrasing, expectChatsOfBothClasses, sharesWithEvaluation } from '../helpers/written-chats.ts';

const contacts = loadWrittenContacts();
const lines = contacts.flatMap((c) => c.turns.map(([, text]) => text));

describe('data: first contacts written blind', () => {
  it('are chats of both classes as the brief asks: sides A and B both speak, a harmful one names the adult, the adult on either side', () => {
    expectChatsOfBothClasses(contacts, { minTurns: 4, maxTurns: 40, minHarmful: 80 });
    expect(new Set(contacts.map((c) => c.writer)).size).toBe(6);
  });

  // 3.17.0's recipe trains on them (WRITTEN_CONTACTS=3, WRITTEN_CONTACTS_FLAT=3), so `npm run train` reproduces
  // the shipped model only while they stay as they are: new first contacts belong in a batch a new recipe names.
  it('are the 269 first contacts 3.17.0 was trained on, unchanged (116 harmful, 153 benign)', () => {
    expect([contacts.length, contacts.filter((c) => c.label === 1).length]).toEqual([269, 116]);
    expect(createHash('sha256').update(JSON.stringify(contacts)).digest('hex')).toBe('5ff9fcc78cf272e0823d405b4f6e977c90114ad0324808b3d3966df3ceb6c4d9');
  });

  it('share no run of six words with any excerpt of the written evaluation sets, the held-back set included', () => {
    const shares = sharesWithEvaluation();
    expect(lines.filter(shares)).toEqual([]);
    // The rule can fail: a line of the held-back set planted in a contact's line is caught.
    const planted = loadWrittenExcerpts(HELD_BACK_SETS[0]).flatMap((e) => e.turns.map(([, text]) => text)).find((t) => grams(t, 6).length > 0);
    expect(shares(`so ${planted}`)).toBe(true);
  });

  it('hold no held-out phrasing of a generator bank: no four words in a row of one, none of three words or more whole', () => {
    const breaks = breaksHeldOutPhrasing();
    expect(lines.filter(breaks)).toEqual([]);
    const plain = HELD_OUT.filter((p) => !p.includes('{'));
    expect(breaks(`${plain.find((p) => grams(p, 1).length >= 4)} ok`)).toBe(true);
  });

  it('say nothing sexual in a harmful chat: the harm is in the pattern', () => {
    const said = contacts.filter((c) => c.label === 1).flatMap((c) => c.turns.map(([, text]) => text));
    expect(said.filter((text) => /\b(sex\w*|nudes?|naked|horny|boobs?|dick|penis|vagina|bra|hot)\b/i.test(text))).toEqual([]);
  });

  it('reach the corpus only when asked for, as copies in the train split after the windows, then as many flat as asked', () => {
    const o = { seed: 5, n: 200, real: false, synthetic: true, dataDir: '', jsonl: [], strangers: 100 };
    const text = (rs: readonly { id: string; split: string; conversation: string }[]): string[] => rs.map((r) => `${r.id} ${r.split} ${r.conversation}`);
    const unasked = buildCorpus({ ...o, writtenWindows: 1 });
    expect(text(buildCorpus({ ...o, writtenWindows: 1, writtenContacts: 0 }))).toEqual(text(unasked));
    const asked = buildCorpus({ ...o, writtenWindows: 1, writtenContacts: 2, writtenContactsFlat: 1 });
    expect(text(asked.slice(0, unasked.length))).toEqual(text(unasked));
    const added = asked.slice(unasked.length);
    expect(added).toHaveLength(3 * contacts.length);
    expect(new Set(added.map((r) => r.split))).toEqual(new Set(['train']));
    expect(new Set(added.map((r) => r.family))).toEqual(new Set(['written_contact']));
    expect(new Set([...added, ...unasked].map((r) => r.id)).size).toBe(added.length + unasked.length);
    const side = { A: 'user1', B: 'user2', neither: 'neither' } as const;
    contacts.forEach((c, k) => {
      const [first, second, flat] = added.slice(k * 3, k * 3 + 3);
      const rendered = c.turns.map(([s, t]) => `${side[s]}: ${t}`).join('\n');
      for (const r of [first, second]) expect(r).toMatchObject({ conversation: rendered, label: c.label, predator: side[c.predator] });
      expect(flat).toMatchObject({ conversation: c.turns.map(([, t]) => t).join(' '), label: c.label, tags: ['flat'] });
    });
    expect(() => buildCorpus({ ...o, writtenContacts: -1 })).toThrow(/written contacts: a whole number of copies/);
    // After both batches of windows too, where two are asked for.
    const two = buildCorpus({ ...o, writtenWindows: 1, writtenWindowBatches: 2 });
    expect(buildCorpus({ ...o, writtenWindows: 1, writtenWindowBatches: 2, writtenContacts: 1 }).slice(two.length).map((r) => r.family)).toEqual(contacts.map(() => 'written_contact'));
    expect(two.slice(unasked.length).every((r) => r.family === 'written_window')).toBe(true);
  });

  it('are not the windows of either batch: no chat is in both', () => {
    const windows = new Set(loadWrittenWindows(2).map((w) => JSON.stringify(w.turns)));
    expect(contacts.filter((c) => windows.has(JSON.stringify(c.turns)))).toEqual([]);
  });
});
