// First contact between strangers and relationships under way (contact.ts): both kinds in both
// classes, so that neither chat register, nor talk of ages, nor affection is a cue for the class, and
// excerpt labels that follow where a grooming chat's harm begins.
import { describe, expect, it } from 'vitest';
import {
  CONTACT_TEST_FAMILIES,
  COURTSHIP_FAMILIES,
  SHORT_EXCERPT_CHARS,
  STRANGER_FAMILIES,
  aslSlice,
  contactKind,
  contactShortExcerpts,
  contactTestSlice,
  courtshipSlice,
  peerContactSlice,
  peerSlice,
  rideSlice,
  rideTestChats,
  strangerSlice,
} from '../../scripts/data/contact.ts';
import { buildCorpus, testSplitOf } from '../../scripts/data/corpus.ts';
import { allSwitches, cutExcerpt, familyMoves, phrasingSplits, type Move } from '../../scripts/data/generate.ts';
import * as C from '../../scripts/data/phrases-contact.ts';
import * as P from '../../scripts/data/phrases.ts';
import { createRng } from '../../scripts/data/rng.ts';
import type { Split } from '../../scripts/data/record.ts';
import { parseTurns } from '../../src/scoring/conversation.ts';

const sw = allSwitches(true);
const strangers = strangerSlice(7, 1500, sw);
const courtship = courtshipSlice(7, 1500, sw);
const heldOutNames = new Set(CONTACT_TEST_FAMILIES.map((f) => f.name));
const base = (family: string): string => family.replace(/_excerpt_benign$/, '');
const ASL_ANSWER = /(?:^|\s)(1[0-9]|[2-6][0-9])\s?(?:\/\s?)?(m|f|male|female|girl|guy)\b/i;

describe('contact data: first contact between strangers and relationships under way', () => {
  it('gives each kind chats of both classes', () => {
    for (const slice of [strangers, courtship]) {
      const harmful = slice.filter((r) => r.label === 1).length / slice.length;
      expect(harmful).toBeGreaterThan(0.25);
      expect(harmful).toBeLessThan(0.6);
    }
  });

  it('has the age/sex/location ritual in benign chats about as often as in harmful ones, so an age stated is no cue', () => {
    const share = (label: 0 | 1): number => {
      const rs = strangers.filter((r) => r.label === label && !(r.tags ?? []).includes('excerpt'));
      return rs.filter((r) => ASL_ANSWER.test(r.conversation)).length / rs.length;
    };
    expect(share(0)).toBeGreaterThan(0.4);
    expect(Math.abs(share(0) - share(1))).toBeLessThan(0.25);
  });

  it('says affection, calls and plans in benign relationships as well as in harmful ones', () => {
    const affection = new Set(C.RL_AFFECTION.filter((p) => !p.includes('{')));
    const shareWith = (label: 0 | 1): number => {
      const rs = courtship.filter((r) => r.label === label);
      return rs.filter((r) => parseTurns(r.conversation).some((t) => affection.has(t.text.toLowerCase()))).length / rs.length;
    };
    expect(shareWith(0)).toBeGreaterThan(0.1);
    expect(shareWith(1)).toBeGreaterThan(0.1);
  });

  it('keeps the held-out families and the test split out of the training slices', () => {
    for (const r of [...strangers, ...courtship]) {
      expect(heldOutNames.has(base(r.family))).toBe(false);
      expect(r.split).not.toBe('test');
    }
    const test = contactTestSlice(7, 800, sw);
    expect(test.every((r) => r.split === 'test')).toBe(true);
    expect(new Set(test.map((r) => base(r.family)))).toEqual(new Set([...STRANGER_FAMILIES, ...COURTSHIP_FAMILIES, ...CONTACT_TEST_FAMILIES].map((f) => f.name)));
  });

  it('never uses a held-out phrasing of a contact bank in the training slices', () => {
    const banks = [C.ST_ASL, C.ST_PURSUE, C.ST_ADULT_LEAVES, C.RL_AFFECTION, C.RL_PLANS, C.CHILD_LIFE, C.ADULT_LIFE, C.RIDE_ADULT, C.RIDE_CHILD];
    // A phrasing that another bank also lists (`how old r u` is an age probe too) may come from there, and
    // bursts and re-cuts cut longer lines into pieces of up to three words (`what r u` of `what r u doing`).
    const elsewhere = (bank: readonly string[], p: string): boolean =>
      [...Object.values(P), ...Object.values(C)].some((b) => Array.isArray(b) && b !== bank && (b as readonly string[]).includes(p));
    const heldOut = banks.flatMap((b) => b.filter((p, i) => phrasingSplits(b)[i] === 'test' && !p.includes('{') && p.split(' ').length >= 4 && !elsewhere(b, p)));
    expect(heldOut.length).toBeGreaterThan(10);
    // Whole lines as said (register transforms may respell a word, so a line equal to the phrasing is the leak).
    const lines = new Set([...strangers, ...courtship, ...rideSlice(7, 1500, sw), ...aslSlice(7, 1500, sw), ...peerSlice(7, 300, sw), ...peerContactSlice(7, 600, sw)].flatMap((r) => parseTurns(r.conversation).map((t) => t.text.toLowerCase())));
    expect(heldOut.filter((p) => lines.has(p))).toEqual([]);
    // And they do reach the test split.
    const testLines = new Set([...contactTestSlice(7, 3000, sw), ...rideTestChats(7, 1500, sw)].flatMap((r) => parseTurns(r.conversation).map((t) => t.text.toLowerCase())));
    expect(heldOut.filter((p) => testLines.has(p)).length).toBeGreaterThan(heldOut.length / 3);
  });

  it("labels an excerpt of a courtship harmful once it reaches the adult's first predatory move, even with none inside it", () => {
    const moves: Move[] = [
      ...Array.from({ length: 30 }, (_, i): Move => ({ role: i % 2 ? 'B' : 'A', text: `small talk ${i}`, harmful: false, smallTalk: true })),
      { role: 'A', text: 'i miss ur voice', harmful: true, smallTalk: false },
      ...Array.from({ length: 30 }, (_, i): Move => ({ role: i % 2 ? 'A' : 'B', text: `after ${i}`, harmful: false, smallTalk: true })),
    ];
    let after = 0;
    let before = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const window = cutExcerpt(moves, true, createRng(seed), true);
      const texts = window.moves.map((m) => m.text);
      if (texts.every((t) => t.startsWith('after'))) {
        after++;
        expect(window.label).toBe(1);
        // The same window under the old rule: no harmful move kept, so benign.
        expect(cutExcerpt(moves, true, createRng(seed), false).label).toBe(0);
      }
      if (texts.every((t) => t.startsWith('small talk'))) {
        before++;
        expect(window.label).toBe(0);
      }
    }
    expect(after).toBeGreaterThan(10);
    expect(before).toBeGreaterThan(10);
  });

  it('cuts the short-excerpt proxy flat, under its character limit, in both classes', () => {
    const short = contactShortExcerpts(7, 400, sw);
    expect(short.length).toBeGreaterThan(100);
    for (const r of short) {
      expect(r.conversation.length).toBeLessThan(SHORT_EXCERPT_CHARS);
      expect(r.conversation).not.toContain('\n');
      expect(r.onset_line).toBeUndefined();
      expect(contactKind(r.family)).toBeDefined();
    }
    const harmful = short.filter((r) => r.label === 1).length;
    expect(harmful).toBeGreaterThan(short.length * 0.15);
    expect(harmful).toBeLessThan(short.length * 0.7);
  });

  it("leaves the shipped recipe's corpus as it was unless a slice is asked for", () => {
    const o = { seed: 5, n: 300, real: false, synthetic: true, dataDir: '', jsonl: [] };
    const without = buildCorpus(o);
    const withSlices = buildCorpus({ ...o, strangers: 50, courtship: 50, rides: 50, asl: 50 });
    expect(withSlices.slice(0, without.length)).toEqual(without);
    expect(withSlices.length).toBe(without.length + 200);
  });

  it("offers an adult's rides to a child in benign chats too, worded as a courtship's plans, in training and validation only", () => {
    const rides = rideSlice(7, 600, sw);
    expect(rides.every((r) => r.label === 0 && r.family === 'rides_child' && (r.split === 'train' || r.split === 'val'))).toBe(true);
    // The plans a courting adult makes ('ill wait in the car', 'ill pick u up at 4') are an everyday
    // pickup here: the same words in both classes, so a ride is no cue on its own.
    const plans = new Set(C.RL_PLANS.filter((p) => !p.includes('{')));
    const shared = C.RIDE_ADULT.filter((p) => plans.has(p));
    expect(shared.length).toBeGreaterThanOrEqual(2);
    const lines = rides.flatMap((r) => parseTurns(r.conversation).map((t) => t.text.toLowerCase()));
    expect(lines.filter((l) => shared.some((p) => l.includes(p))).length).toBeGreaterThan(20);
    expect(rides.filter((r) => parseTurns(r.conversation).length <= 4).length).toBeGreaterThan(rides.length * 0.1);
  });

  it('adds benign first contacts with a young age stated, teen peers and an adult who leaves, in training and validation only', () => {
    const asl = aslSlice(7, 800, sw);
    expect(asl.every((r) => r.label === 0 && (r.split === 'train' || r.split === 'val'))).toBe(true);
    const families = new Map<string, number>();
    for (const r of asl) families.set(r.family ?? '', (families.get(r.family ?? '') ?? 0) + 1);
    expect([...families.keys()].sort()).toEqual(['stranger_leaves', 'stranger_peers']);
    expect(families.get('stranger_leaves')).toBeGreaterThan(200);
    // Ages are traded in them as in the harmful first contacts, so a stated young age is no cue on its own.
    expect(asl.filter((r) => ASL_ANSWER.test(r.conversation)).length).toBeGreaterThan(asl.length / 2);
    // Its own stream: none of its chats is one of the strangers' slice.
    const seen = new Set(strangers.map((r) => r.conversation));
    expect(asl.filter((r) => seen.has(r.conversation)).length).toBeLessThan(asl.length * 0.02);
  });

  it("adds long benign chats between stated peers with a courtship's everyday words, half narrow, in training and validation only", () => {
    const peers = peerSlice(7, 400, sw);
    expect(peers).toHaveLength(400);
    expect(peers.every((r) => r.label === 0 && r.predator === 'neither' && (r.split === 'train' || r.split === 'val'))).toBe(true);
    expect(new Set(peers.map((r) => r.family))).toEqual(new Set(['long_peers_mentions', 'stranger_peers_long', 'stranger_adults_long']));
    const narrow = peers.filter((r) => (r.tags ?? []).includes('narrow')).length;
    expect(narrow).toBe(200);
    // A child's everyday line (a parent home, a test, a bedtime) is said between teen peers, as in a courtship.
    const childLife = C.CHILD_LIFE.filter((p) => !p.includes('{'));
    const teens = peers.filter((r) => r.family === 'long_peers_mentions');
    expect(teens.filter((r) => childLife.some((p) => r.conversation.toLowerCase().includes(p))).length).toBeGreaterThan(teens.length / 4);
    // The first contacts that go on state ages as the harmful ones do, and run long.
    const contacts = peers.filter((r) => r.family !== 'long_peers_mentions' && !(r.tags ?? []).includes('excerpt'));
    expect(contacts.filter((r) => ASL_ANSWER.test(r.conversation)).length).toBeGreaterThan(contacts.length / 3);
    expect(contacts.filter((r) => r.conversation.split('\n').length >= 100).length).toBeGreaterThan(contacts.length / 2);
    expect(peerSlice(7, 40, { ...sw, long: false })).toEqual([]);
  });

  it('adds benign first contacts between stated peers that state ages and go on for a pursuit\'s length, in training and validation only', () => {
    const contacts = peerContactSlice(7, 400, sw);
    expect(contacts).toHaveLength(400);
    expect(contacts.every((r) => r.label === 0 && r.predator === 'neither' && (r.split === 'train' || r.split === 'val'))).toBe(true);
    expect(new Set(contacts.map((r) => r.family))).toEqual(new Set(['stranger_peers_more', 'stranger_adults_more']));
    const whole = contacts.filter((r) => !(r.tags ?? []).includes('excerpt'));
    expect(whole.filter((r) => ASL_ANSWER.test(r.conversation)).length).toBeGreaterThan(whole.length / 3);
    // As long as the harmful first contacts (ritual, a little small talk, then 2 to 8 moves), not days.
    const lines = whole.filter((r) => r.conversation.includes('\n')).map((r) => r.conversation.split('\n').length).sort((a, b) => a - b);
    const median = lines[Math.floor(lines.length / 2)] ?? 0;
    expect(median).toBeGreaterThanOrEqual(10);
    expect(median).toBeLessThan(40);
    // Between teens, a child's everyday line (a parent home, a test, a bedtime) is said, as in a pursuit.
    const childLife = C.CHILD_LIFE.filter((p) => !p.includes('{'));
    const teens = whole.filter((r) => r.family === 'stranger_peers_more');
    expect(teens.filter((r) => childLife.some((p) => r.conversation.toLowerCase().includes(p))).length).toBeGreaterThan(teens.length / 4);
  });

  it("hears each side's own life twice as often in every relationship family's train split with livesSaid, and nowhere else", () => {
    // A's own life: a courting adult's, a partner's, a teen's, a parent's work (livesShare).
    const ownLife = { courtship_child: C.ADULT_LIFE, partners_adult: C.ADULT_LIFE, teen_couple: C.CHILD_LIFE, parent_care: C.ADULT_LIFE };
    const build = (name: string, split: Split, livesSaid: boolean, seed: number): Move[] => familyMoves(name, seed, split, { livesSaid }, COURTSHIP_FAMILIES);
    for (const [name, bank] of Object.entries(ownLife)) {
      const heads = bank.map((p) => p.split('{')[0]!.trim()).filter((h) => h.length >= 6);
      const share = (livesSaid: boolean): number => {
        const moves = Array.from({ length: 400 }, (_, i) => build(name, 'train', livesSaid, 1000 + i)).flat();
        return moves.filter((m) => m.role === 'A' && heads.some((h) => m.text.toLowerCase().includes(h))).length / moves.length;
      };
      expect(share(true) / share(false), name).toBeGreaterThan(1.6);
      // Validation, test and the proxies keep the usual share: the same chats, move for move.
      for (const split of ['val', 'test'] as const) expect(build(name, split, true, 42), `${name} ${split}`).toEqual(build(name, split, false, 42));
    }
    // Off unless a corpus asks for it; asked for, the test split stays the one the releases were measured on.
    const o = { seed: 5, n: 200, real: false, synthetic: true, dataDir: '', jsonl: [], courtship: 200 };
    const unasked = buildCorpus(o);
    expect(buildCorpus({ ...o, lives: false })).toEqual(unasked);
    const asked = buildCorpus({ ...o, lives: true });
    expect(asked).not.toEqual(unasked);
    expect(asked.filter((r) => r.split === 'test')).toEqual(testSplitOf(o));
  });

  it("lets an eval draw one bank's phrasings from the test quarter while the rest keep training's (wording.ts --banks)", () => {
    const quarter = (bank: readonly string[], split: Split): string[] => bank.filter((p, i) => phrasingSplits(bank)[i] === split && !p.includes('{'));
    const said = (moves: readonly Move[], lines: readonly string[]): number => moves.filter((m) => lines.some((l) => m.text.includes(l))).length;
    const wording = new Map<readonly string[], Split>([[C.RL_AFFECTION, 'test']]);
    const chats = (w?: typeof wording): Move[] => Array.from({ length: 200 }, (_, i) => familyMoves('courtship_child', 500 + i, 'train', w ? { wording: w } : {}, COURTSHIP_FAMILIES)).flat();
    const viewed = chats(wording);
    const plain = chats();
    expect(said(plain, quarter(C.RL_AFFECTION, 'test'))).toBe(0);
    expect(said(viewed, quarter(C.RL_AFFECTION, 'test'))).toBeGreaterThan(20);
    // Every other bank keeps training's wording: the child's life never reads its held-out quarter.
    expect(said(viewed, quarter(C.CHILD_LIFE, 'test'))).toBe(0);
    expect(said(viewed, quarter(C.CHILD_LIFE, 'train'))).toBeGreaterThan(20);
  });

  it("draws the eval's ride chats in the test split, with the ride banks' held-out phrasings", () => {
    const test = rideTestChats(32032, 300, sw);
    expect(test.every((r) => r.label === 0 && r.split === 'test')).toBe(true);
    const heldOut = C.RIDE_CHILD.filter((_, i) => phrasingSplits(C.RIDE_CHILD)[i] === 'test' && !C.RIDE_CHILD[i]?.includes('{'));
    expect(heldOut.length).toBeGreaterThan(0);
    expect(test.some((r) => heldOut.some((p) => r.conversation.toLowerCase().includes(p)))).toBe(true);
    expect(rideTestChats(32032, 300, sw)).toEqual(test);
  });
});
