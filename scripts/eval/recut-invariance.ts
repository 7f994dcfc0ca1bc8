// Re-cut invariance: the same words cut into lines differently (4-word lines, one line per speaker
// run, one flat line with no prefixes) must score about the same. Model 1.1.0 moved from ~0 to
// ~1 when a chat was re-cut into 4-word turns: it had learned turn structure, not content.
// Target: for every re-cut in RECUTS, at least 90 % of conversations move by less than 0.15.

import type { ScoreRequest } from '../../src/scoring/types.ts';
import { RECUTS, alternatingWordLines, turnsOf, type Recut } from '../data/recut.ts';
import type { LabeledConversation } from '../data/record.ts';
import { check, fmt, mark, round, type GuardCheck } from './guard.ts';
import { deterministicSubsample, scoreInBatches, type BatchScorer } from './harness.ts';
import { mean, rocAuc } from './metrics.ts';

export const RECUT_MAX_MOVE = 0.15;
export const RECUT_TARGET_SHARE = 0.9;
/** Test conversations the re-cut rule is measured on, in the eval report and in npm test's guard alike. */
export const RECUT_SAMPLE = 1500;

export interface RecutRow {
  recut: string;
  conversations: number;
  /** Share whose harmful_score moved by less than RECUT_MAX_MOVE. */
  share_stable: number;
  mean_abs_move: number;
  /**
   * Conversations the re-cut really changes (their parsed turns differ): flattening a chat that is
   * already flat, or merging runs where no speaker writes twice in a row, leaves it as it was and
   * moves nothing. share_stable counts every conversation, as the issue's rule does; this and
   * share_stable_changed show how much of it is such no-op re-cuts.
   */
  changed: number;
  /** share_stable over the changed conversations only (NaN when none changed). */
  share_stable_changed: number;
  /** ROC-AUC of the re-cut rendering (harmful vs benign). */
  roc_auc: number;
  /** Whether the row is one of the guarded re-cuts (alternatingWordLines is reported, not guarded). */
  guarded: boolean;
  pass: boolean;
}

export interface RecutReport {
  conversations: number;
  roc_auc_original: number;
  rows: RecutRow[];
  /** The smallest share_stable over the guarded re-cuts. */
  min_share_stable: number;
}

export const EXTRA_RENDERINGS: Readonly<Record<string, (conversation: string) => string>> = {
  alternating_word_lines: (c) => alternatingWordLines(c, 4),
};

/**
 * Whether a re-cut changed what the model reads: the parsed turns (speaker and text, runs of
 * whitespace collapsed, since whitespace only separates words), not the raw text. Close to the
 * tokenizer's view, not identical: JavaScript's \s counts U+FEFF, which clean_text drops, and not
 * U+0085, which BERT splits on.
 */
export function recutChanges(original: string, recut: string): boolean {
  const turns = (c: string) => JSON.stringify(turnsOf(c).map((t) => [t.speaker, t.text]));
  return turns(original) !== turns(recut);
}

/**
 * Per-rendering stability against the original scores; pure, so tests can use it on their own scores.
 * `changed[i]` says whether conversation i's re-cut changed its turns (all, when not given).
 */
export function stabilityRow(
  name: string,
  labels: readonly number[],
  original: readonly number[],
  recut: readonly number[],
  guarded: boolean,
  changed: readonly boolean[] = recut.map(() => true),
): RecutRow {
  const moves = recut.map((s, i) => Math.abs(s - (original[i] as number)));
  const stable = moves.map((m) => (m < RECUT_MAX_MOVE ? 1 : 0));
  const share = mean(stable);
  const changedStable = stable.filter((_, i) => changed[i]);
  return {
    recut: name,
    conversations: moves.length,
    share_stable: share,
    changed: changedStable.length,
    share_stable_changed: changedStable.length === 0 ? Number.NaN : mean(changedStable),
    mean_abs_move: mean(moves),
    roc_auc: rocAuc(labels, recut),
    guarded,
    pass: !guarded || share >= RECUT_TARGET_SHARE,
  };
}

/**
 * Scores each record as it is and as re-cut by every RECUTS entry (plus alternatingWordLines as an
 * extra, unguarded row), with the record's ages unchanged: only the line cutting differs.
 */
export async function recutInvariance(scorer: BatchScorer, records: readonly LabeledConversation[], max = RECUT_SAMPLE): Promise<RecutReport> {
  const sample = deterministicSubsample(records, max);
  const labels = sample.map((r) => r.label);
  const req = (r: LabeledConversation, conversation: string): ScoreRequest => ({ conversation, age_a: r.age_a, age_b: r.age_b });
  const original = (await scoreInBatches(scorer, sample.map((r) => req(r, r.conversation)))).map((p) => p.harmful_score);
  const rows: RecutRow[] = [];
  const renderings: Array<[string, (c: string) => string, boolean]> = [
    ...(Object.entries(RECUTS) as Array<[Recut, (c: string) => string]>).map(([k, f]): [string, (c: string) => string, boolean] => [k, f, true]),
    ...Object.entries(EXTRA_RENDERINGS).map(([k, f]): [string, (c: string) => string, boolean] => [k, f, false]),
  ];
  for (const [name, f, guarded] of renderings) {
    const texts = sample.map((r) => f(r.conversation));
    const scores = (await scoreInBatches(scorer, sample.map((r, i) => req(r, texts[i] as string)))).map((p) => p.harmful_score);
    rows.push(stabilityRow(name, labels, original, scores, guarded, sample.map((r, i) => recutChanges(r.conversation, texts[i] as string))));
  }
  const guardedShares = rows.filter((r) => r.guarded).map((r) => r.share_stable);
  return { conversations: sample.length, roc_auc_original: rocAuc(labels, original), rows, min_share_stable: Math.min(...guardedShares) };
}

/** The guard's checks: every guarded re-cut keeps RECUT_TARGET_SHARE of conversations within RECUT_MAX_MOVE. */
export function recutChecks(rc: RecutReport): GuardCheck[] {
  return rc.rows
    .filter((r) => r.guarded)
    .map((r) => check('re-cut invariance', `${r.recut}: share moving < ${RECUT_MAX_MOVE}`, r.share_stable, `>= ${RECUT_TARGET_SHARE}`, (v) => v >= RECUT_TARGET_SHARE));
}

/** The guard's figures for report.metrics. */
export function recutFigures(rc: RecutReport): Record<string, number> {
  return {
    recut_min_share_stable: round(rc.min_share_stable),
    ...Object.fromEntries(rc.rows.flatMap((r) => [
      [`recut_share_stable_${r.recut}`, round(r.share_stable)],
      [`recut_share_stable_changed_${r.recut}`, round(r.share_stable_changed)],
      [`recut_roc_auc_${r.recut}`, round(r.roc_auc)],
    ])),
  };
}

/** The guard's section of the report. */
export function recutMarkdown(rc: RecutReport): string {
  return `### Re-cut invariance
${rc.conversations} test conversations (deterministic subsample by id hash), each scored as written and re-cut
(ages unchanged). ROC-AUC as written: ${fmt(rc.roc_auc_original)}. Target: for every guarded re-cut, >= ${RECUT_TARGET_SHARE} of
conversations move by < ${RECUT_MAX_MOVE}. \`alternating_word_lines\` (flat text re-cut into 4-word lines under
alternating made-up speakers) is reported, not guarded. The share counts every conversation, as the
issue's rule does, including those a re-cut leaves as they were (flattening a flat chat, merging where
no speaker writes twice in a row); the next columns count only the conversations whose turns (speaker and words) the re-cut changed.

| re-cut | guarded | share moving < ${RECUT_MAX_MOVE} | changed by the re-cut | share moving < ${RECUT_MAX_MOVE}, changed only | mean abs move | ROC-AUC of rendering | result |
|---|---|---|---|---|---|---|---|
${rc.rows.map((r) => `| ${r.recut} | ${r.guarded ? 'yes' : 'no'} | ${fmt(r.share_stable)} | ${r.changed} | ${fmt(r.share_stable_changed)} | ${fmt(r.mean_abs_move)} | ${fmt(r.roc_auc)} | ${r.guarded ? mark(r.pass) : '-'} |`).join('\n')}`;
}
