// Explanations: the running score after every turn, the first alert and the evidence, from the
// per-piece outputs of one pass (docs/model-contract.md, "Running scores"). Pure functions.
import { isHarmful } from './aggregate.ts';
import type { EncodedTurn } from './encode.ts';
import type { TurnSpeaker, TurnTrace } from './types.ts';

/** Most evidence entries an explanation lists. */
export const MAX_EVIDENCE = 5;

export interface Evidence {
  index: number;
  user: TurnSpeaker;
  /** How much the running score rose after this entry. */
  weight: number;
}

export interface Explanation {
  turn_scores: number[];
  first_alert_index: number | null;
  evidence: Evidence[];
}

/**
 * Running harm after every piece, from each segment's calibrated per-piece harm: the conversation cut
 * after piece k keeps the full segments before k's segment (their scores) and k's segment up to k, and
 * harmful_score is the maximum over segments, so the running score is that maximum over those.
 */
export function runningByPiece(segmentTurns: readonly Float64Array[]): Float64Array {
  let total = 0;
  for (const t of segmentTurns) total += t.length;
  const out = new Float64Array(total);
  let before = 0;
  let k = 0;
  for (const turns of segmentTurns) {
    for (let i = 0; i < turns.length; i++) {
      const p = turns[i] as number;
      out[k++] = p > before ? p : before;
    }
    // A full segment counts with its score, which is its value after its last piece.
    if (turns.length > 0) before = out[k - 1] as number;
  }
  return out;
}

/** The trace of an encoded conversation: each turn takes the running score at its last piece. */
export function traceTurns(turns: readonly EncodedTurn[], running: Float64Array, start: number): TurnTrace {
  return {
    start,
    turns: turns.map((t) => ({ line: t.line, speaker: t.speaker, score: t.lastPiece < 0 ? start : (running[t.lastPiece] as number) })),
  };
}

/**
 * First alert and evidence over a list of running scores. `users[i]` is who wrote entry i; `start`
 * is the score before entry 0. Evidence: the entries after which the score rose most, strongest
 * first (ties to the earlier entry); entries where it did not rise are never evidence.
 */
export function explain(scores: readonly number[], users: readonly TurnSpeaker[], start: number): Explanation {
  let firstAlert: number | null = null;
  const rises: Evidence[] = [];
  let previous = start;
  for (let i = 0; i < scores.length; i++) {
    const s = scores[i] as number;
    if (firstAlert === null && isHarmful(s)) firstAlert = i;
    if (s > previous) rises.push({ index: i, user: users[i] as TurnSpeaker, weight: s - previous });
    previous = s;
  }
  rises.sort((a, b) => b.weight - a.weight || a.index - b.index);
  return { turn_scores: [...scores], first_alert_index: firstAlert, evidence: rises.slice(0, MAX_EVIDENCE) };
}

/** v1's view: one entry per parsed turn, each with the 0-based line where the turn starts. */
export interface TurnExplanation extends Explanation {
  turn_lines: number[];
  evidence: Array<Evidence & { line: number }>;
}

export function explainTurns(trace: TurnTrace): TurnExplanation {
  const turns = trace.turns;
  const base = explain(
    turns.map((t) => t.score),
    turns.map((t) => t.speaker),
    trace.start,
  );
  return {
    ...base,
    turn_lines: turns.map((t) => t.line),
    evidence: base.evidence.map((e) => ({ ...e, line: (turns[e.index] as TurnTrace['turns'][number]).line })),
  };
}

/**
 * One entry per line, for input where every line is one message (v2: message i is line i). A line
 * that starts no turn (a message with no text) leaves the score where the previous line had it.
 */
export function explainLines(trace: TurnTrace, lineCount: number): Explanation {
  const scores = new Array<number>(lineCount);
  const users = new Array<TurnSpeaker>(lineCount);
  let k = 0;
  let score = trace.start;
  let user: TurnSpeaker = 'unknown';
  for (let line = 0; line < lineCount; line++) {
    while (k < trace.turns.length && (trace.turns[k] as TurnTrace['turns'][number]).line <= line) {
      const t = trace.turns[k] as TurnTrace['turns'][number];
      score = t.score;
      user = t.speaker;
      k++;
    }
    scores[line] = score;
    users[line] = user;
  }
  return explain(scores, users, trace.start);
}
