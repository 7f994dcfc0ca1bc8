// Reading an explanation for display: which text each entry stands for, how much each entry moved
// the running score, and the shade that says so. Pure (no DOM): test/console/ runs it in Node.
import type { ShownMessage } from './input.ts';
import type { Explanation } from './types.ts';

/**
 * The v1 turns of `conversation` matched to its explanation: the console's parser is the appliance's,
 * so they match; should they not (another version of the appliance), each entry shows the lines the
 * appliance says it starts on, its speaker unknown unless it is evidence.
 */
export function alignTurns(conversation: string, turns: ShownMessage[], e: Explanation): ShownMessage[] {
  const starts = e.turn_lines;
  if (starts === undefined) return turns;
  if (turns.length === starts.length && turns.every((t, i) => t.line === starts[i])) return turns;
  const lines = conversation.split(/\r\n|\r|\n/);
  return starts.map((line, i) => ({
    user: e.evidence.find((v) => v.index === i)?.user ?? 'unknown',
    text: lines.slice(line, starts[i + 1] ?? lines.length).join('\n').trim(),
    line,
  }));
}

/** How much each entry moved the running score; the first's base (an empty chat) is not in the answer. */
export function rises(e: Explanation): Array<number | undefined> {
  const s = e.turn_scores;
  return s.map((score, i) => {
    if (i > 0) return score - (s[i - 1] as number);
    // The first entry's rise is known when it is evidence, and is not a rise when fewer than five are listed.
    const listed = e.evidence.find((v) => v.index === 0);
    if (listed !== undefined) return listed.weight;
    return e.evidence.length < 5 ? 0 : undefined;
  });
}

/** Shade 0 (no rise) to 5 (a rise of 0.2 or more): the class a message's background takes. */
export function shade(rise: number | undefined): number {
  if (rise === undefined || rise <= 0) return 0;
  const steps = [0.01, 0.03, 0.07, 0.14, 0.2];
  let level = 0;
  for (const step of steps) if (rise >= step) level++;
  return Math.max(1, level);
}
