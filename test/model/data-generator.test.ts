import { describe, expect, it } from 'vitest';
import { FAMILY_NAMES, TEST_FAMILIES, familyMoves, generate, phrasingSplits } from '../../scripts/data/generate.ts';
import * as P from '../../scripts/data/phrases.ts';
import { parseAge } from '../../src/scoring/ages.ts';
import { parseTurns } from '../../src/scoring/conversation.ts';

const corpus = generate({ seed: 11, n: 3000 });

// Shorthand and punctuation vary per conversation; compare phrasings in a form immune to both.
const SHORT: Array<[RegExp, string]> = [
  [/\byou\b/g, 'u'], [/\byour\b/g, 'ur'], [/\bare\b/g, 'r'], [/\bto\b/g, '2'], [/\bfor\b/g, '4'],
  [/\bplease\b/g, 'pls'], [/\bbecause\b/g, 'bc'], [/\bokay\b/g, 'ok'], [/\breally\b/g, 'rly'],
  [/\bright now\b/g, 'rn'], [/\bwhat\b/g, 'wat'], [/\bthanks\b/g, 'thx'], [/\btonight\b/g, '2nite'], [/\bpeople\b/g, 'ppl'],
];
function canonical(text: string): string {
  let t = text.toLowerCase().replace(/[^a-z0-9 ]/g, ' ').replace(/\s+/g, ' ').trim();
  for (const [re, s] of SHORT) t = t.replace(re, s);
  return t;
}

/** The predator's stage lines without placeholders, in canonical form. */
const predatorLines = new Set(
  [P.G_TRUST, P.G_RISK, P.G_SECRECY, P.G_ISOLATE, P.G_SEXUAL, P.G_COMPLY, P.X_HOOK, P.X_DEMAND, P.X_THREAT, P.C_THREAT]
    .flat()
    .filter((p) => !p.includes('{'))
    .map(canonical),
);

describe('conversation generator', () => {
  it('produces the same corpus for the same seed and a different one for another seed', () => {
    // The register-shift test slice comes after the main records, from its own random stream.
    const main = (rs: ReturnType<typeof generate>) => rs.filter((r) => !r.tags?.includes('register-shift'));
    expect(main(generate({ seed: 11, n: 200 }))).toEqual(corpus.slice(0, 200));
    expect(generate({ seed: 11, n: 200 })).toEqual(generate({ seed: 11, n: 200 }));
    expect(generate({ seed: 12, n: 200 }).map((r) => r.conversation)).not.toEqual(corpus.slice(0, 200).map((r) => r.conversation));
  });

  it('puts held-out scenario families only in the test split', () => {
    for (const r of corpus) if (TEST_FAMILIES.includes(r.family)) expect(r.split).toBe('test');
    const trainFamilies = new Set(corpus.filter((r) => r.split === 'train').map((r) => r.family));
    for (const f of TEST_FAMILIES) expect(trainFamilies.has(f)).toBe(false);
    for (const f of FAMILY_NAMES) expect(corpus.some((r) => r.family === f)).toBe(true);
  });

  it('assigns a quarter of each bank to test and a quarter to val by phrasing text, not position', () => {
    for (const bank of [P.G_CONTACT, P.G_SEXUAL, P.X_DEMAND, P.B_PARTY, P.FILLER]) {
      const splits = phrasingSplits(bank);
      const count = (s: string) => splits.filter((x) => x === s).length;
      expect(Math.abs(count('test') - bank.length / 4)).toBeLessThanOrEqual(1);
      expect(Math.abs(count('val') - bank.length / 4)).toBeLessThanOrEqual(1);
      // The same phrasings in another order keep their splits.
      const reversed = [...bank].reverse();
      expect(phrasingSplits(reversed)).toEqual([...splits].reverse());
      // Not the old position rule: the test quarter is not every fourth phrasing.
      expect(splits.every((s, i) => (s === 'test') === (i % 4 === 3))).toBe(false);
    }
  });

  it('never uses a held-out phrasing outside its split (test, or val for calibration)', () => {
    const banks = [P.G_TRUST, P.G_RISK, P.G_SECRECY, P.G_COMPLY, P.C_THREAT, P.X_THREAT, P.B_SECRETS, P.B_GAMING];
    // Phrasings of at least three words: bursts and re-cuts cut other phrasings into two-word pieces
    // (`bet u wont` / `1v1 me`) that can coincide with a short held-out phrasing.
    const long = (p: string) => !p.includes('{') && p.split(' ').length >= 3;
    const heldOut = banks.flatMap((b) => b.filter((p, i) => phrasingSplits(b)[i] === 'test' && long(p)).map(canonical));
    expect(heldOut.length).toBeGreaterThan(10);
    const lines = (split: string): string[] =>
      corpus.filter((r) => r.split === split).flatMap((r) => parseTurns(r.conversation).map((t) => canonical(t.text)));
    const trainVal = new Set([...lines('train'), ...lines('val')]);
    const test = new Set(lines('test'));
    expect(heldOut.filter((p) => trainVal.has(p))).toEqual([]);
    expect(heldOut.filter((p) => test.has(p)).length).toBeGreaterThan(heldOut.length / 2);
    // Validation phrasings (for calibration on unseen wording) never reach training either.
    const valOnly = banks.flatMap((b) => b.filter((p, i) => phrasingSplits(b)[i] === 'val' && long(p)).map(canonical));
    const train = new Set(lines('train'));
    const val = new Set(lines('val'));
    expect(valOnly.filter((p) => train.has(p))).toEqual([]);
    expect(valOnly.filter((p) => val.has(p)).length).toBeGreaterThan(valOnly.length / 3);
  });

  it('labels harmful conversations with a predator on either side and benign ones with neither', () => {
    const harmful = corpus.filter((r) => r.label === 1);
    for (const r of corpus) expect(r.predator === 'neither').toBe(r.label === 0);
    const user1 = harmful.filter((r) => r.predator === 'user1').length / harmful.length;
    expect(user1).toBeGreaterThan(0.35);
    expect(user1).toBeLessThan(0.65);
    expect(harmful.length / corpus.length).toBeGreaterThan(0.25);
  });

  it('writes ages in every API format, often omitted, always parseable', () => {
    const ages = corpus.flatMap((r) => [r.age_a, r.age_b]).filter((a): a is string => a !== undefined);
    for (const a of ages) expect(parseAge(a), a).toBeDefined();
    expect(ages.some((a) => /^\d+$/.test(a))).toBe(true);
    expect(ages.some((a) => /^\d+-\d+$/.test(a))).toBe(true);
    expect(ages.some((a) => a === 'minor' || a === 'adult')).toBe(true);
    expect(corpus.filter((r) => r.age_a === undefined && r.age_b === undefined).length / corpus.length).toBeGreaterThan(0.3);
  });

  it('has the variety of real chats: other speaker names, continuation lines, long multi-segment exchanges', () => {
    expect(corpus.some((r) => !/^user[12]:/i.test(r.conversation))).toBe(true);
    expect(corpus.some((r) => r.conversation.split('\n').some((l) => !/^[^:\s]+:/.test(l)))).toBe(true);
    expect(corpus.filter((r) => parseTurns(r.conversation).length > 64).length).toBeGreaterThan(20);
    expect(corpus.some((r) => parseTurns(r.conversation).length <= 4)).toBe(true);
  });

  it('labels as predator the speaker (as the server maps names to user1/user2) who says the predatory lines', () => {
    let checked = 0;
    let named = 0;
    for (const r of corpus.filter((x) => x.label === 1 && !x.tags?.includes('flat'))) {
      const turns = parseTurns(r.conversation).filter((t) => predatorLines.has(canonical(t.text)));
      if (turns.length === 0) continue;
      checked++;
      if (!/^user[12]:/i.test(r.conversation)) named++;
      for (const t of turns) expect(t.speaker, r.id).toBe(r.predator);
    }
    expect(checked).toBeGreaterThan(300);
    expect(named).toBeGreaterThan(50);
  });

  it("tells a family's own lines from the small talk every family shares (greetings, filler, everyday talk)", () => {
    // Lines that one bank alone holds: a short line such as 'ok' is both filler and a child's answer.
    const banks = Object.entries(P).filter((e): e is [string, string[]] => Array.isArray(e[1]) && e[1].every((x) => typeof x === 'string'));
    const holders = new Map<string, number>();
    for (const [, bank] of banks) for (const line of new Set(bank)) holders.set(line, (holders.get(line) ?? 0) + 1);
    const plain = (...bs: (readonly string[])[]): Set<string> => new Set(bs.flat().filter((p) => !p.includes('{') && holders.get(p) === 1));
    const filler = plain(P.FILLER);
    const own = plain(P.B_SECRETS, P.B_FLIRT, P.B_PARENT);
    const seen = { filler: 0, own: 0, predatory: 0 };
    for (let seed = 0; seed < 60; seed++) {
      for (const family of ['friends_secrets', 'adult_flirting', 'parent_child', 'grooming_slow']) {
        for (const m of familyMoves(family, seed)) {
          if (['hi', 'hey', 'heyy', 'hello'].includes(m.text)) expect(m.smallTalk, m.text).toBe(true);
          if (filler.has(m.text)) (seen.filler++, expect(m.smallTalk, m.text).toBe(true));
          if (own.has(m.text)) (seen.own++, expect(m.smallTalk, m.text).toBe(false));
          if (m.harmful) (seen.predatory++, expect(m.smallTalk, m.text).toBe(false));
        }
      }
    }
    expect(Math.min(seen.filler, seen.own, seen.predatory)).toBeGreaterThan(20);
  });

  it("knows where the harm starts: onset_line is the predator's first predatory line, in harmful records whose lines survive rendering", () => {
    const withOnset = corpus.filter((r) => r.onset_line !== undefined);
    expect(withOnset.length).toBeGreaterThan(500);
    expect(withOnset.some((r) => r.tags?.includes('excerpt'))).toBe(true);
    let recognised = 0;
    for (const r of withOnset) {
      expect(r.label, r.id).toBe(1);
      // Flat and re-cut text has lost the lines the onset would point at.
      expect(r.tags ?? [], r.id).not.toContain('flat');
      expect(r.tags ?? [], r.id).not.toContain('recut');
      const onset = r.onset_line as number;
      expect(onset).toBeLessThan(r.conversation.split('\n').length);
      const turns = parseTurns(r.conversation);
      const holding = turns.filter((t) => t.line <= onset).pop();
      expect(holding?.speaker, r.id).toBe(r.predator);
      // No predatory line is said before it.
      for (const t of turns.filter((x) => x.line < (holding?.line ?? 0))) expect(predatorLines.has(canonical(t.text)), `${r.id}: ${t.text}`).toBe(false);
      if (predatorLines.has(canonical(holding?.text ?? ''))) recognised++;
    }
    expect(recognised).toBeGreaterThan(100);
    // Harmful records rendered flat or re-cut, and every benign record, carry no onset.
    expect(corpus.filter((r) => r.label === 0 && r.onset_line !== undefined)).toEqual([]);
  });
});
