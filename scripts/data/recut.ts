// Re-renderings of a conversation's text that keep what was said and change only how it is cut into
// lines: what a moderator's export, a paste or another chat client does to the same chat. Training
// applies them to both classes alike (so turn structure is no cue) and the evaluation checks that
// the score barely moves under them (re-cut invariance, issue "The model reads real chats").
import { parseTurns } from '../../src/scoring/conversation.ts';
import type { Turn } from '../../src/scoring/types.ts';
import type { Rng } from './rng.ts';

/** Turns as the server reads them; each turn's inner line breaks folded to spaces. */
export function turnsOf(conversation: string): Turn[] {
  return parseTurns(conversation).map((t) => ({ speaker: t.speaker, text: t.text.replace(/\s+/g, ' ').trim() }));
}

/** The API's text form: one `user1: ...` / `user2: ...` line per turn; flat text's turns stay unprefixed lines. */
export function renderTurns(turns: readonly Turn[]): string {
  return turns.map((t) => (t.speaker === 'unknown' ? t.text : `${t.speaker}: ${t.text}`)).join('\n');
}

/** Every turn cut into lines of at most `words` words, each line keeping its speaker's prefix. */
export function splitIntoWordLines(conversation: string, words = 4): string {
  const out: Turn[] = [];
  for (const t of turnsOf(conversation)) {
    const w = t.text.split(' ');
    for (let i = 0; i < w.length; i += words) out.push({ speaker: t.speaker, text: w.slice(i, i + words).join(' ') });
  }
  return renderTurns(out);
}

/** Consecutive turns of the same speaker joined into one turn (a burst of short lines becomes one). */
export function mergeSpeakerRuns(conversation: string): string {
  const out: Turn[] = [];
  for (const t of turnsOf(conversation)) {
    const last = out[out.length - 1];
    if (last !== undefined && last.speaker === t.speaker) last.text += ' ' + t.text;
    else out.push({ ...t });
  }
  return renderTurns(out);
}

/** Every `k` consecutive turns joined into one line under the first one's speaker, whoever wrote them. */
export function mergeEvery(conversation: string, k = 3): string {
  const turns = turnsOf(conversation);
  const out: Turn[] = [];
  for (let i = 0; i < turns.length; i += k) {
    const group = turns.slice(i, i + k);
    out.push({ speaker: (group[0] as Turn).speaker, text: group.map((t) => t.text).join(' ') });
  }
  return renderTurns(out);
}

/** All the text on one line with no speaker prefixes: a moderator's flat export. */
export function flatten(conversation: string): string {
  return turnsOf(conversation)
    .map((t) => t.text)
    .join(' ');
}

/** Flat text re-cut into `words`-word lines with alternating made-up speakers (how one outside evaluation re-cut flat excerpts). */
export function alternatingWordLines(conversation: string, words = 4): string {
  const w = flatten(conversation).split(' ').filter((x) => x !== '');
  const lines: string[] = [];
  for (let i = 0, n = 0; i < w.length; i += words, n++) lines.push(`user${(n % 2) + 1}: ${w.slice(i, i + words).join(' ')}`);
  return lines.join('\n');
}

/** A window of `length` consecutive turns starting at `start` (clamped), in the API's text form. */
export function excerptTurns(conversation: string, start: number, length: number): string {
  const turns = turnsOf(conversation);
  const s = Math.max(0, Math.min(start, Math.max(0, turns.length - 1)));
  return renderTurns(turns.slice(s, s + Math.max(1, length)));
}

export type Recut = 'split4' | 'merge_runs' | 'flat';

/** The three re-cuts that the invariance guard checks. */
export const RECUTS: Readonly<Record<Recut, (conversation: string) => string>> = {
  split4: (c) => splitIntoWordLines(c, 4),
  merge_runs: mergeSpeakerRuns,
  flat: flatten,
};

/** One of the re-cuts, or the text unchanged, drawn with the given probabilities (training augmentation). */
export function randomRecut(
  conversation: string,
  rng: Rng,
  p: { split: number; merge: number; flat: number },
): { text: string; recut: 'split' | 'merge_runs' | 'flat' | 'none' } {
  const x = rng.next();
  if (x < p.flat) return { text: flatten(conversation), recut: 'flat' };
  // 2 to 6 words a line, so training never sees only the guard's own 4-word cut.
  if (x < p.flat + p.split) return { text: splitIntoWordLines(conversation, rng.int(2, 6)), recut: 'split' };
  if (x < p.flat + p.split + p.merge) return { text: mergeSpeakerRuns(conversation), recut: 'merge_runs' };
  return { text: conversation, recut: 'none' };
}
