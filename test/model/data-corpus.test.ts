import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { SHIPPED_CORPUS, SHIPPED_SLICES, SLICE_NAMES, buildCorpus, switchesWithout, testSplitOf, type CorpusOptions } from '../../scripts/data/corpus.ts';
import { FAMILY_NAMES, HARMFUL_FAMILIES, TEST_FAMILIES, allSwitches, cutExcerpt, dailySlice, familyMoves, generate, repetitiveSlice } from '../../scripts/data/generate.ts';
import { CASINO_ACTIONS, DEFAULT_DATA_DIR, SELF_DIALOGUE_SUBSET, loadCasino, loadSelfDialogue, REAL_REGISTER_SHARE, registerShiftReal, renderReal } from '../../scripts/data/real.ts';
import { SHIFT_MARKER, applyRegister, drawRegister, registerLines } from '../../scripts/data/register.ts';
import { createRng } from '../../scripts/data/rng.ts';
import { parseTurns } from '../../src/scoring/conversation.ts';
import type { LabeledConversation } from '../../scripts/data/record.ts';
import { shippedRecipe } from '../helpers/training.ts';

const corpus = generate({ seed: 5, n: 16000 });
const has = (r: { tags?: string[] | undefined }, tag: string): boolean => r.tags?.includes(tag) ?? false;
const baseFamily = (f: string): string => f.replace(/_excerpt_benign$/, '');

describe('data: renderings for both classes', () => {
  it('renders every family flat and as excerpts, in train (unless held out) and in test', () => {
    for (const f of FAMILY_NAMES) {
      const splits = TEST_FAMILIES.includes(f) ? ['test'] : ['train', 'test'];
      for (const split of splits) {
        const rs = corpus.filter((r) => baseFamily(r.family) === f && r.split === split);
        expect(rs.some((r) => has(r, 'flat')), `${f} flat in ${split}`).toBe(true);
        expect(rs.some((r) => has(r, 'excerpt')), `${f} excerpt in ${split}`).toBe(true);
      }
    }
  });

  it('renders flat text on one line without speaker prefixes, keeping the predator label', () => {
    const flat = corpus.filter((r) => has(r, 'flat'));
    expect(flat.length / corpus.length).toBeGreaterThan(0.08);
    for (const r of flat) {
      expect(r.conversation).not.toContain('\n');
      expect(r.predator === 'neither').toBe(r.label === 0);
    }
    const share = (label: 0 | 1) => corpus.filter((r) => r.label === label && has(r, 'flat')).length / corpus.filter((r) => r.label === label).length;
    expect(Math.abs(share(1) - share(0))).toBeLessThan(0.1);
    // Flat excerpts of long chats read as a moderator's export: a few thousand characters.
    const lengths = flat.filter((r) => has(r, 'excerpt')).map((r) => r.conversation.length);
    expect(lengths.filter((l) => l >= 1500 && l <= 5000).length).toBeGreaterThan(50);
    expect(lengths.filter((l) => l < 300).length).toBeGreaterThan(50);
  });

  it('has short benign chats: one-line greetings and fragments, and short predatory openers', () => {
    const short = corpus.filter((r) => !has(r, 'flat') && parseTurns(r.conversation).length <= 4);
    expect(short.filter((r) => r.label === 0 && parseTurns(r.conversation).length === 1).length).toBeGreaterThan(100);
    expect(short.filter((r) => r.label === 1).length).toBeGreaterThan(100);
    const smallTalk = corpus.filter((r) => r.family === 'short_small_talk').length / corpus.length;
    expect(smallTalk).toBeGreaterThan(0.07);
    expect(smallTalk).toBeLessThan(0.13);
  });

  it('has long chats of at least 100 turns in both classes', () => {
    for (const label of [0, 1]) {
      const long = corpus.filter((r) => r.label === label && !has(r, 'flat') && parseTurns(r.conversation).length >= 100);
      expect(long.length, `label ${label}`).toBeGreaterThan(100);
    }
    expect(corpus.some((r) => parseTurns(r.conversation).length >= 400)).toBe(true);
  });

  it('labels an excerpt harmful only if it contains a harmful move', () => {
    let harmful = 0;
    let benign = 0;
    for (const f of HARMFUL_FAMILIES) {
      for (let seed = 1; seed <= 60; seed++) {
        const moves = familyMoves(f, seed);
        expect(moves.some((m) => m.harmful), f).toBe(true);
        // Harmful moves are the predator's (role A), never the victim's replies.
        for (const m of moves) if (m.harmful) expect(m.role).toBe('A');
        const rng = createRng(seed);
        for (let k = 0; k < 5; k++) {
          const cut = cutExcerpt(moves, true, rng);
          expect(cut.label).toBe(cut.moves.some((m) => m.harmful) ? 1 : 0);
          if (cut.label === 1) harmful++;
          else benign++;
        }
      }
    }
    expect(harmful).toBeGreaterThan(100);
    expect(benign).toBeGreaterThan(20);
    for (const f of FAMILY_NAMES.filter((x) => !HARMFUL_FAMILIES.includes(x))) expect(familyMoves(f, 3).some((m) => m.harmful), f).toBe(false);
    // Benign windows of harmful chats are benign records with nobody named.
    const windows = corpus.filter((r) => r.family.endsWith('_excerpt_benign'));
    expect(windows.length).toBeGreaterThan(50);
    for (const r of windows) {
      expect(r.label).toBe(0);
      expect(r.predator).toBe('neither');
      expect(has(r, 'excerpt')).toBe(true);
    }
  });

  it('lets the minor answer in kind in harmful chats', () => {
    const harmful = corpus.filter((r) => r.label === 1);
    expect(harmful.filter((r) => has(r, 'in-kind')).length / harmful.length).toBeGreaterThan(0.4);
  });

  it('re-cuts a share of both classes with recut.ts', () => {
    for (const label of [0, 1]) {
      const rs = corpus.filter((r) => r.label === label);
      const share = rs.filter((r) => has(r, 'recut')).length / rs.length;
      expect(share, `label ${label}`).toBeGreaterThan(0.08);
      expect(share).toBeLessThan(0.25);
    }
  });
});

describe('data: register', () => {
  it('draws chat register and tidy prose in both classes', () => {
    for (const label of [0, 1]) {
      const rs = corpus.filter((r) => r.label === label && !has(r, 'register-shift'));
      expect(rs.filter((r) => has(r, 'tidy')).length / rs.length, `tidy ${label}`).toBeGreaterThan(0.1);
      const lower = rs.filter((r) => r.conversation === r.conversation.toLowerCase()).length / rs.length;
      expect(lower, `lowercase ${label}`).toBeGreaterThan(0.15);
    }
    const rng = createRng(3);
    const chat = { ...drawRegister(rng, 0), tidy: false, lower: true, shorthand: 1, stripPunct: 1, typo: 0, repeat: 0, emoticon: 0, randomCase: 0 };
    expect(applyRegister('Are you going to come to the park because I want to see you?', chat, rng)).toBe('r u gonna come 2 the park bc i wanna see u');
    const tidy = drawRegister(createRng(1), 1);
    expect(applyRegister('idk if ur home rn', { ...tidy, typo: 0, emoticon: 0 }, rng)).toBe("I don't know if your home right now.");
  });

  it('sends bursts of several short lines from one side', () => {
    const rng = createRng(9);
    const reg = { ...drawRegister(rng, 0), burst: 1, join: 0 };
    const lines = registerLines([{ side: 0, text: 'i was at the park with my friends all day' }], [reg, reg], rng);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.every((l) => l.side === 0)).toBe(true);
  });

  it('never uses a register-shift transform in a train record; the register-shift slice is test only and always shifted', () => {
    for (const r of corpus.filter((x) => x.split !== 'test' || !has(x, 'register-shift'))) {
      expect(SHIFT_MARKER.test(r.conversation), `${r.id}: ${r.conversation.slice(0, 200)}`).toBe(false);
    }
    const shift = corpus.filter((r) => has(r, 'register-shift'));
    expect(shift.length).toBe(Math.round(16000 * 0.03));
    for (const r of shift) {
      expect(r.split).toBe('test');
      expect(TEST_FAMILIES).toContain(r.family);
      expect(SHIFT_MARKER.test(r.conversation)).toBe(true);
    }
    expect(new Set(shift.map((r) => r.label))).toEqual(new Set([0, 1]));
  });
});

describe('data: real benign sets', () => {
  const casino = loadCasino(DEFAULT_DATA_DIR);
  const self = loadSelfDialogue(DEFAULT_DATA_DIR);

  it('CaSiNo: drops the interface actions, keeps two speakers, holds casino_test out for test', () => {
    expect(casino.length).toBeGreaterThan(1000);
    for (const r of casino) {
      for (const t of parseTurns(r.conversation)) expect(CASINO_ACTIONS).not.toContain(t.text.trim());
      expect(r.conversation).toMatch(/^user1: /);
      expect(r.source).toBe('casino');
      expect(r.family).toBe('casino');
    }
    expect(casino.filter((r) => r.id.startsWith('casino-casino_test-')).every((r) => r.split === 'test')).toBe(true);
    expect(casino.filter((r) => !r.id.startsWith('casino-casino_test-')).every((r) => r.split !== 'test')).toBe(true);
  });

  it('Self-dialogue: a seeded subset of dialogues with at least two turns, split about 70/10/20', () => {
    expect(self.length).toBe(SELF_DIALOGUE_SUBSET);
    expect(loadSelfDialogue(DEFAULT_DATA_DIR).map((r) => r.id)).toEqual(self.map((r) => r.id));
    for (const r of self) expect(parseTurns(r.conversation).length).toBeGreaterThanOrEqual(2);
    const share = (s: string) => self.filter((r) => r.split === s).length / self.length;
    expect(share('train')).toBeGreaterThan(0.65);
    expect(share('train')).toBeLessThan(0.75);
    expect(share('test')).toBeGreaterThan(0.16);
    expect(share('test')).toBeLessThan(0.24);
  });

  it('renders REAL_REGISTER_SHARE of the real chats in chat register, some flat and as excerpts; every real record is benign', () => {
    const real = renderReal([...casino, ...self], allSwitches(true));
    const shift = registerShiftReal([...casino, ...self], 40);
    for (const r of [...casino, ...self, ...real, ...shift]) {
      expect(r.label).toBe(0);
      expect(r.predator).toBe('neither');
    }
    const share = (tag: string) => real.filter((r) => has(r, tag)).length / real.length;
    expect(share('chat-register')).toBeGreaterThan(REAL_REGISTER_SHARE - 0.1);
    expect(share('chat-register')).toBeLessThan(REAL_REGISTER_SHARE + 0.1);
    expect(share('flat')).toBeGreaterThan(0.05);
    expect(share('excerpt')).toBeGreaterThan(0.1);
    // The training register adds no register-shift marker (a few real chats have one of their own).
    const rawOf = new Map([...casino, ...self].map((r) => [r.id, r.conversation.toLowerCase()]));
    const markers = new RegExp(SHIFT_MARKER.source, 'gi');
    for (const r of real.filter((x) => x.split !== 'test')) {
      for (const m of r.conversation.match(markers) ?? []) expect(rawOf.get(r.id), `${r.id}: ${m}`).toContain(m.toLowerCase());
    }
    for (const r of shift) {
      expect(r.split).toBe('test');
      expect(SHIFT_MARKER.test(r.conversation)).toBe(true);
    }
  });
});

describe('data: ablation switches', () => {
  it('with every change off, generates only the old families without tags', () => {
    const old = generate({ seed: 5, n: 1500, ...allSwitches(false) });
    expect(old.length).toBe(1500);
    for (const r of old) {
      // Only the descriptive length tags remain.
      for (const t of r.tags ?? []) expect(['short', 'long']).toContain(t);
      expect(['long_grooming', 'short_small_talk', 'grooming_opener', 'adult_sexting', 'teen_flirting']).not.toContain(r.family);
    }
  });

  it('parses --without lists and rejects unknown switches', () => {
    const sw = switchesWithout(['register', 'flat', 'newRealSets']);
    expect(sw.register).toBe(false);
    expect(sw.flat).toBe(false);
    expect(sw.newRealSets).toBe(false);
    expect(sw.long).toBe(true);
    expect(() => switchesWithout(['nope'])).toThrow(/unknown switch/);
    const c = buildCorpus({ seed: 2, n: 50, real: true, synthetic: true, dataDir: DEFAULT_DATA_DIR, jsonl: [], realLimit: 200, switches: { newRealSets: false, registerShift: false } });
    expect(c.some((r) => r.source === 'casino' || r.source === 'self-dialogue')).toBe(false);
    expect(c.some((r) => r.tags?.includes('register-shift'))).toBe(false);
  });

  it.each([
    { what: "adults' errands and coworkers", option: 'errands', id: '-errand-', families: ['neighbors_errands', 'coworkers'] },
    { what: "teen friends' apps, videos, calls and plans", option: 'friends', id: '-friends-', families: ['teen_friends_apps'] },
  ] as const)('adds $what only to training and validation, benign, leaving every other record as it was', ({ option, id, families }) => {
    const options = { seed: 2, n: 300, real: true, synthetic: true, dataDir: DEFAULT_DATA_DIR, jsonl: [], realLimit: 200 };
    const without = buildCorpus(options);
    const withSlice = buildCorpus({ ...options, [option]: 400 });
    const added = withSlice.filter((r) => r.id.includes(id));
    expect(added).toHaveLength(400);
    expect(withSlice.filter((r) => !r.id.includes(id))).toEqual(without);
    expect(new Set(added.map((r) => r.family))).toEqual(new Set(families));
    for (const r of added) {
      expect(r.split).not.toBe('test');
      expect([r.label, r.predator]).toEqual([0, 'neither']);
    }
    expect(added.filter((r) => r.split === 'val').length / added.length).toBeGreaterThan(0.05);
    expect(added.some((r) => has(r, 'flat')) && added.some((r) => has(r, 'excerpt'))).toBe(true);
  });

  it('adds long chats of repeated small talk, both classes, only to training and validation, leaving every other record as it was', () => {
    const options = { seed: 2, n: 300, real: true, synthetic: true, dataDir: DEFAULT_DATA_DIR, jsonl: [], realLimit: 200 };
    const without = buildCorpus(options);
    const withNarrow = buildCorpus({ ...options, repetitive: 60 });
    const added = withNarrow.filter((r) => r.id.includes('-narrow-'));
    expect(added).toHaveLength(60);
    expect(withNarrow.filter((r) => !r.id.includes('-narrow-'))).toEqual(without);
    for (const r of added) {
      expect(r.split).not.toBe('test');
      expect(has(r, 'narrow')).toBe(true);
    }
    expect(new Set(added.map((r) => r.label))).toEqual(new Set([0, 1]));
    expect(added.filter((r) => r.label === 1).every((r) => r.family === 'long_grooming')).toBe(true);
  });

  it("adds long benign chats of two teen friends over days, half of them narrow, only to training and validation, leaving every other record as it was", () => {
    const options = { seed: 2, n: 300, real: true, synthetic: true, dataDir: DEFAULT_DATA_DIR, jsonl: [], realLimit: 200 };
    const without = buildCorpus(options);
    const withDaily = buildCorpus({ ...options, daily: 80 });
    const added = withDaily.filter((r) => r.id.includes('-daily-'));
    expect(added).toHaveLength(80);
    expect(withDaily.filter((r) => !r.id.includes('-daily-'))).toEqual(without);
    for (const r of added) {
      expect(r.split).not.toBe('test');
      expect([r.label, r.predator, r.family]).toEqual([0, 'neither', 'long_teen_daily']);
    }
    const narrow = added.filter((r) => has(r, 'narrow')).length;
    expect(narrow).toBeGreaterThan(20);
    expect(narrow).toBeLessThan(60);
    // Long: the whole chats (not excerpts) run to a hundred messages and more.
    const whole = added.filter((r) => !has(r, 'excerpt'));
    expect(whole.filter((r) => r.conversation.split('\n').length >= 100).length).toBeGreaterThan(whole.length / 2);
    // With no long chats, none.
    expect(dailySlice(2, 40, { ...allSwitches(true), long: false })).toEqual([]);
  });

  it('makes a narrow chat say its small talk again and again, where an ordinary long chat varies it', () => {
    // Mean over whole chats of distinct lines per line.
    const distinctShare = (records: readonly LabeledConversation[]): number => {
      const whole = records.filter((r) => (r.tags ?? []).every((t) => t === 'narrow' || t === 'long' || t === 'in-kind'));
      const shares = whole.map((r) => {
        const lines = r.conversation.split('\n').map((l) => l.replace(/^[^:]+: /, ''));
        return new Set(lines).size / lines.length;
      });
      return shares.reduce((a, b) => a + b, 0) / shares.length;
    };
    const narrow = repetitiveSlice(3, 80, { ...allSwitches(true), register: false, recut: false, flat: false, excerpts: false });
    const ordinary = generate({ seed: 3, n: 600, register: false, recut: false, flat: false, excerpts: false }).filter((r) => r.family.startsWith('long_'));
    expect(narrow.length).toBeGreaterThan(20);
    // Rendering still varies a repeated line (typos, shorthand, small talk joined to a line), so the
    // rendered text repeats less than the moves do: about 0.49 of lines distinct against 0.80.
    expect(distinctShare(narrow)).toBeLessThan(distinctShare(ordinary) * 0.7);
  });
});

describe("data: the eval's fallback corpus", () => {
  it("has the seed, size and training slices of the shipped model's recipe, so npm run eval rebuilds its corpus", () => {
    const sh = readFileSync(new URL('../../scripts/train/train.sh', import.meta.url), 'utf8');
    const { version: shipped, settings } = shippedRecipe();
    const recipe = new Map(settings);
    const defaultOf = (text: string, name: string) => Number(new RegExp(`^(?:[A-Z_]+=[^;\\n]*; )*${name}=(\\d+)`, 'm').exec(text)?.[1]);
    // Read from the recipe file: every slice a count, the shipped relationships and texting on.
    expect(Object.keys(SHIPPED_SLICES).sort()).toEqual([...SLICE_NAMES, 'phrasings', 'texting', 'writtenWindows', 'writtenWindowsFlat', 'writtenWindowBatches', 'writtenContacts', 'writtenContactsFlat'].sort());
    expect(SLICE_NAMES.every((name) => String(SHIPPED_SLICES[name]) === recipe.get(name.toUpperCase()))).toBe(true);
    expect(SHIPPED_SLICES.courtship).toBeGreaterThan(0);
    expect(SHIPPED_SLICES.texting).toBe(recipe.get('TEXTING') === '1');
    expect(SHIPPED_SLICES.phrasings).toBe(recipe.get('PHRASINGS') === '1');
    expect(String(SHIPPED_SLICES.writtenWindows)).toBe(recipe.get('WRITTEN_WINDOWS'));
    expect(String(SHIPPED_SLICES.writtenWindowsFlat)).toBe(recipe.get('WRITTEN_WINDOWS_FLAT'));
    expect(String(SHIPPED_SLICES.writtenWindowBatches)).toBe(recipe.get('WRITTEN_WINDOW_BATCHES'));
    expect(String(SHIPPED_SLICES.writtenContacts)).toBe(recipe.get('WRITTEN_CONTACTS'));
    expect(String(SHIPPED_SLICES.writtenContactsFlat)).toBe(recipe.get('WRITTEN_CONTACTS_FLAT'));
    expect({ seed: defaultOf(sh, 'SEED'), n: defaultOf(sh, 'N') }).toEqual(SHIPPED_CORPUS);
    // The shipped package is the recipe's release.
    expect(JSON.parse(readFileSync(new URL('../../models/conversation-risk/manifest.json', import.meta.url), 'utf8')).version).toBe(shipped);
  });
});

describe('data: the training slices are one list', () => {
  it("train.sh's SLICES name corpus.ts's slices in corpus.ts's order, so each recipe setting reaches its slice", () => {
    const sh = readFileSync(new URL('../../scripts/train/train.sh', import.meta.url), 'utf8');
    const table = /^SLICES=\(([^)]*)\)/m.exec(sh)?.[1] ?? '';
    const keys = [...table.matchAll(/"([A-Z_]+)\|/g)].map((m) => m[1]?.toLowerCase());
    expect(keys).toEqual(SLICE_NAMES);
  });
});

describe("data: the shipped test split (shippedTestSplit)", () => {
  it('is the test split of the whole corpus, texting hosts included, built without the training slices', () => {
    const options: CorpusOptions = { seed: 3, n: 300, real: true, synthetic: true, dataDir: DEFAULT_DATA_DIR, jsonl: [], realLimit: 400, texting: true, errands: 30, repetitive: 12, friends: 20, strangers: 40, courtship: 40 };
    const lines = (records: LabeledConversation[]) => records.map((r) => `${r.id} ${r.source} ${r.split} ${r.label} ${r.conversation}`);
    const whole = buildCorpus(options);
    const split = testSplitOf(options);
    expect(lines(split)).toEqual(lines(whole.filter((r) => r.split === 'test')));
    const sources = new Set(split.map((r) => r.source));
    expect([...sources].filter((s) => /sms|irc/.test(s)).sort(), 'the texting chats host test chats').toEqual(['irc-ubuntu+generator', 'sms-spam-collection+generator']);
  });
});
