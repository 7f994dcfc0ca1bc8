// The rules chats written blind for training (scripts/data/written-chats.ts: the windows, the first
// contacts) are held to, shared by their tests: both sides speak, a harmful chat names the adult, and
// nothing of the evaluation's written sets or of the generator's held-out phrasings reaches training.
import { expect } from 'vitest';
import type { PlacedChat } from '../../scripts/data/written-chats.ts';
import { HELD_BACK_SETS, WRITTEN_SETS, loadWrittenExcerpts } from '../../scripts/eval/written-excerpts.ts';
import { HELD_OUT, grams, spacedWords } from './phrasings.ts';

/** Each chat two-sided with single-line turns, `minTurns` to `maxTurns` of them; at least `minHarmful` harmful chats, no fewer benign than harmful, the adult on either side. */
export function expectChatsOfBothClasses(chats: readonly PlacedChat[], o: { minTurns: number; maxTurns: number; minHarmful: number }): void {
  for (const c of chats) {
    expect(c.turns.length).toBeGreaterThanOrEqual(o.minTurns);
    expect(c.turns.length).toBeLessThanOrEqual(o.maxTurns);
    expect(new Set(c.turns.map(([side]) => side))).toEqual(new Set(['A', 'B']));
    expect(c.turns.every(([, text]) => text.trim() !== '' && !/[\r\n]/.test(text))).toBe(true);
    expect(c.label === 1 ? ['A', 'B'] : ['neither']).toContain(c.predator);
  }
  const harmful = chats.filter((c) => c.label === 1);
  expect(harmful.length).toBeGreaterThanOrEqual(o.minHarmful);
  expect(chats.length - harmful.length).toBeGreaterThanOrEqual(harmful.length);
  expect(new Set(harmful.map((c) => c.predator))).toEqual(new Set(['A', 'B']));
}

/** Whether a line shares a run of six words with any excerpt of the written evaluation sets, the held-back ones included. */
export function sharesWithEvaluation(): (text: string) => boolean {
  const evaluation = new Set(
    [...WRITTEN_SETS, ...HELD_BACK_SETS].flatMap((set) => loadWrittenExcerpts(set).flatMap((e) => e.turns.flatMap(([, text]) => grams(text, 6)))),
  );
  expect(evaluation.size).toBeGreaterThan(10_000);
  return (text) => grams(text, 6).some((g) => evaluation.has(g));
}

// Narrower than the bank lines' rule (phrasings.ts heldOutOverlaps): a whole chat says `i miss u` or
// `ok ok` as any chat does, so only held-out phrasings of three words or more count whole.
/** Whether a line holds four words in a row of a held-out phrasing of a generator bank, or one of three words or more whole. */
export function breaksHeldOutPhrasing(): (text: string) => boolean {
  const four = new Set(HELD_OUT.flatMap((p) => grams(p, 4)));
  const whole = HELD_OUT.filter((p) => grams(p, 1).length >= 3 && !p.includes('{')).map(spacedWords);
  return (text) => {
    const said = spacedWords(text);
    return grams(text, 4).some((g) => four.has(g)) || whole.some((p) => said.includes(p));
  };
}
