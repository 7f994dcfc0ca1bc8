// The rule that keeps lines added to the generator's banks for training (phrases-training.ts,
// phrases-written.ts) apart from the phrasings validation and test hold out: an added line that
// repeated a held-out one, or most of it, would carry the test quarter's wording into training.
import { phrasingSplits } from '../../scripts/data/generate.ts';
import * as C from '../../scripts/data/phrases-contact.ts';
import * as P from '../../scripts/data/phrases.ts';
import { parseTurns } from '../../src/scoring/conversation.ts';

const isBank = (b: unknown): b is string[] => Array.isArray(b) && typeof b[0] === 'string';
/** Every bank of the generator's phrases. */
export const BANKS: (readonly string[])[] = [...Object.values(P), ...Object.values(C)].filter(isBank);
/** Every phrasing of the validation and test quarters, of every bank. */
export const HELD_OUT: string[] = BANKS.flatMap((b) => b.filter((_, i) => phrasingSplits(b)[i] !== 'train'));

/** Runs of `n` words, slots and punctuation aside. */
export const grams = (text: string, n: number): string[] => {
  const words = text.toLowerCase().replace(/\{\w+\}/g, '#').replace(/[^\w# ]/g, '').split(/\s+/).filter(Boolean);
  return words.slice(n - 1).map((_, i) => words.slice(i, i + n).join(' '));
};

/** A text's words between spaces, so that `includes` finds whole words in a row only. */
export const spacedWords = (text: string): string => ` ${grams(text, 1).join(' ')} `;

/**
 * The added lines that break the rule, by how: four words in a row of any held-out phrasing, a held-out
 * phrasing said whole inside one or one inside it (`miss u more` in `i miss u more`), three words in a
 * row of their own bank's held-out phrasings. Empty when every line keeps apart.
 */
export function heldOutOverlaps(added: ReadonlyMap<readonly string[], readonly string[]>): { four: string[]; within: string[]; ownThree: string[] } {
  const lines = [...added.values()].flat();
  const held4 = new Set(HELD_OUT.flatMap((p) => grams(p, 4)));
  const inside = (short: string, long: string): boolean => short.trim().includes(' ') && spacedWords(long).includes(spacedWords(short));
  const ownThree = [...added].flatMap(([bank, ls]) => {
    const own3 = new Set(bank.filter((_, i) => phrasingSplits(bank)[i] !== 'train').flatMap((p) => grams(p, 3)));
    return ls.filter((p) => grams(p, 3).some((g) => own3.has(g)));
  });
  return {
    four: lines.filter((p) => grams(p, 4).some((g) => held4.has(g))),
    within: lines.filter((p) => HELD_OUT.some((h) => inside(p, h) || inside(h, p))),
    ownThree,
  };
}

/** Every turn's text of the records, lower-cased. */
export const linesOf = (records: readonly { conversation: string }[]): Set<string> =>
  new Set(records.flatMap((r) => parseTurns(r.conversation).map((t) => t.text.toLowerCase())));
