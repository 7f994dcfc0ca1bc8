// Generated exchanges hosted inside real benign chats (scripts/data/hosted.ts): the same real chats
// carry harmful and benign guests alike, so "reads like the real sets" is no benign cue.
import { describe, expect, it } from 'vitest';
import { buildCorpus } from '../../scripts/data/corpus.ts';
import { HARMFUL_FAMILIES, TEST_FAMILIES, allSwitches, familyMoves } from '../../scripts/data/generate.ts';
import { THIN_LINES, THIN_SHARE, hostedChats, scatter, splice, thinGuest } from '../../scripts/data/hosted.ts';
import { DEFAULT_DATA_DIR, loadCasino, loadSelfDialogue } from '../../scripts/data/real.ts';
import { turnsOf } from '../../scripts/data/recut.ts';
import type { Item, Side } from '../../scripts/data/register.ts';
import { createRng } from '../../scripts/data/rng.ts';
import { STRUCTURE_TARGET_MAX_AUC, structureBaselineAuc } from '../../scripts/eval/structure-baseline.ts';

const real = [...loadCasino(DEFAULT_DATA_DIR), ...loadSelfDialogue(DEFAULT_DATA_DIR)];
const THIN = 0.3;
const hosted = hostedChats(real, allSwitches(true), THIN);
const guestFamily = (f: string): string => f.replace(/^hosted_/, '');

describe('data: exchanges hosted in real chats', () => {
  it.each([
    ['splice', splice],
    ['scatter', scatter],
  ])('%s keeps every host and guest item, each in its own order', (_, place) => {
    const host: Item[] = Array.from({ length: 12 }, (_, i) => ({ side: (i % 2) as Side, text: `h${i}` }));
    const guest: Item[] = Array.from({ length: 7 }, (_, i) => ({ side: (i % 2) as Side, text: `g${i}` }));
    for (let seed = 0; seed < 50; seed++) {
      const out = place(host, guest, createRng(seed));
      expect(out).toHaveLength(19);
      expect(out.filter((x) => x.text.startsWith('h'))).toEqual(host);
      expect(out.filter((x) => x.text.startsWith('g'))).toEqual(guest);
    }
  });

  it("a thin harmful guest keeps only 3 to 6 of the predator's predatory lines, in order", () => {
    for (let seed = 0; seed < 40; seed++) {
      const moves = familyMoves('grooming_slow', seed);
      const thin = thinGuest(moves, true, createRng(seed));
      const predatory = moves.filter((m) => m.role === 'A' && m.harmful);
      expect(thin.length).toBeGreaterThanOrEqual(Math.min(THIN_LINES.min, predatory.length));
      expect(thin.length).toBeLessThanOrEqual(THIN_LINES.max);
      for (const m of thin) expect(m.role === 'A' && m.harmful).toBe(true);
      const positions = thin.map((m) => moves.indexOf(m));
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
    }
  });

  it.each(['parent_child', 'friends_secrets', 'adult_flirting'])(
    "a thin benign guest (%s) keeps 3 to 6 of role A's lines, its own lines before any small talk",
    (family) => {
      for (let seed = 0; seed < 40; seed++) {
        const moves = familyMoves(family, seed);
        const thin = thinGuest(moves, false, createRng(seed));
        const own = moves.filter((m) => m.role === 'A' && !m.smallTalk);
        expect(thin.length).toBeGreaterThanOrEqual(THIN_LINES.min);
        expect(thin.length).toBeLessThanOrEqual(THIN_LINES.max);
        for (const m of thin) expect(m.role).toBe('A');
        expect(thin.filter((m) => !m.smallTalk).length).toBe(Math.min(own.length, thin.length));
      }
    },
  );

  it('thins about the share asked of the hosted records of each class, and leaves the others as they were without thinning', () => {
    const whole = new Map(hostedChats(real, allSwitches(true), 0).map((r) => [r.id, r]));
    for (const label of [0, 1]) {
      const records = hosted.filter((r) => r.label === label);
      const share = records.filter((r) => r.tags?.includes('thin')).length / records.length;
      expect(Math.abs(share - THIN)).toBeLessThan(0.03);
    }
    for (const r of hosted) {
      if (r.tags?.includes('thin')) expect(r.family).toBe(whole.get(r.id)?.family);
      else expect(r).toEqual(whole.get(r.id));
    }
  });

  it('a thin harmful record whose lines are intact knows where its first predatory line is', () => {
    const thin = hosted.filter((r) => r.label === 1 && r.tags?.includes('thin') && !r.tags.includes('flat') && !r.tags.includes('recut'));
    expect(thin.length).toBeGreaterThan(100);
    for (const r of thin) expect(r.onset_line).toBeGreaterThanOrEqual(0);
  });

  it("a thin record is never tagged in-kind: it keeps none of the minor's replies", () => {
    expect(hosted.filter((r) => r.tags?.includes('thin') && r.tags.includes('in-kind'))).toEqual([]);
    expect(hosted.filter((r) => r.tags?.includes('in-kind')).length).toBeGreaterThan(0);
  });

  it('every real chat hosts one harmful and one benign exchange, in its own split', () => {
    expect(hosted.filter((r) => r.label === 1)).toHaveLength(real.length);
    expect(hosted.filter((r) => r.label === 0)).toHaveLength(real.length);
    const splitOf = new Map(real.map((r) => [r.id, r.split]));
    for (const r of hosted) {
      expect(r.split).toBe(splitOf.get(r.id.replace(/-hosted-[hb]$/, '')));
      expect(HARMFUL_FAMILIES.includes(guestFamily(r.family))).toBe(r.label === 1);
      if (r.split !== 'test') expect(TEST_FAMILIES).not.toContain(guestFamily(r.family));
      expect(r.predator === 'neither').toBe(r.label === 0);
    }
    expect(new Set(hosted.map((r) => r.id)).size).toBe(hosted.length);
  });

  it('keeps the host chat: its words appear in the hosted record, which has more turns', () => {
    const byId = new Map(real.map((r) => [r.id, r]));
    for (const r of hosted.filter((x) => !x.tags?.includes('flat') && !x.tags?.includes('recut') && !x.tags?.includes('thin')).slice(0, 200)) {
      const host = byId.get(r.id.replace(/-hosted-[hb]$/, ''))!;
      expect(turnsOf(r.conversation).length).toBeGreaterThan(turnsOf(host.conversation).length);
    }
  });

  it('puts the predator on both sides of the host chat, about equally', () => {
    const user1 = hosted.filter((r) => r.predator === 'user1').length;
    const user2 = hosted.filter((r) => r.predator === 'user2').length;
    expect(Math.abs(user1 - user2) / (user1 + user2)).toBeLessThan(0.1);
  });

  it('does not depend on the order of the real chats', () => {
    const reversed = hostedChats([...real].reverse(), allSwitches(true), THIN);
    const byId = new Map(reversed.map((r) => [r.id, r.conversation]));
    for (const r of hosted) expect(byId.get(r.id)).toBe(r.conversation);
  });

  it('buildCorpus thins guests only at the share asked, THIN_SHARE by default', () => {
    const options = { seed: 3, n: 300, real: true, synthetic: true, dataDir: DEFAULT_DATA_DIR, jsonl: [], realLimit: 300 };
    const thin = (c: readonly { tags?: string[] | undefined }[]) => c.filter((r) => r.tags?.includes('thin')).length;
    expect(thin(buildCorpus(options)) > 0).toBe(THIN_SHARE > 0);
    expect(thin(buildCorpus({ ...options, thinShare: 0 }))).toBe(0);
    expect(thin(buildCorpus({ ...options, thinShare: 0.3 }))).toBeGreaterThan(0);
  });

  it('lowers the structure-only baseline of a corpus built with hosts below one built without', () => {
    const options = { seed: 3, n: 3000, real: true, synthetic: true, dataDir: DEFAULT_DATA_DIR, jsonl: [], realLimit: 1500 };
    const auc = (hosts: boolean) => {
      const c = buildCorpus({ ...options, switches: { hosted: hosts } });
      return structureBaselineAuc(c.filter((r) => r.split === 'train'), c.filter((r) => r.split === 'test')).roc_auc;
    };
    const [without, withHosts] = [auc(false), auc(true)];
    expect(withHosts).toBeLessThan(without);
    expect(withHosts).toBeLessThan(STRUCTURE_TARGET_MAX_AUC + 0.02);
  });
});
