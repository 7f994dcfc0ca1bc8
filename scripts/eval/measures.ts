// The evaluation's own measures beside the shortcut guards (guards.ts), each scored through the
// server's path (a BatchScorer): the headline figures on the held-out test split (and calibration on
// the validation split), per family, with and without ages, by length, the hand-written probes and
// throughput. run.ts calls them in turn and report.ts puts their results into eval.json and eval.md.

import type { Prediction } from '../../src/scoring/types.ts';
import { toRequest } from '../data/export.ts';
import { TEST_FAMILIES } from '../data/generate.ts';
import { REAL_SOURCES } from '../data/real.ts';
import type { LabeledConversation } from '../data/record.ts';
import { renderTurns, turnsOf } from '../data/recut.ts';
import { round } from './guard.ts';
import { scoreInBatches, type BatchScorer } from './harness.ts';
import { atThreshold, calibrationError, mean, prAuc, rocAuc, type ReliabilityBin, type ThresholdMetrics } from './metrics.ts';
import { PROBES } from './probes.ts';
import { hasSpeakerPrefixes, isAttributableHarm } from './slices.ts';

export interface Headline {
  overall: ThresholdMetrics & { roc_auc: number; pr_auc: number };
  /** ROC-AUC over the benign chats and the harmful ones of the held-out families (TEST_FAMILIES). */
  held_out_auc: number;
  /** Predator named, over the attributable harmful chats (speaker prefixes, not flat). */
  attribution: number;
  attribution_flagged: number;
  attribution_held_out: number;
  /** Test indices of the real benign chats (REAL_SOURCES), and the share of them flagged. */
  real: number[];
  real_fpr: number;
  calibration: { ece: number; bins: ReliabilityBin[] };
  /** The same error on the validation split the calibration was fitted on. */
  val_ece: number;
}

/** The headline figures of `preds`, the scorer's predictions for `test` in order; scores the validation split. */
export async function headline(scorer: BatchScorer, test: readonly LabeledConversation[], preds: readonly Prediction[], val: readonly LabeledConversation[]): Promise<Headline> {
  const labels = test.map((r) => r.label);
  const scores = preds.map((p) => p.harmful_score);
  const overall = { roc_auc: rocAuc(labels, scores), pr_auc: prAuc(labels, scores), ...atThreshold(labels, scores) };
  const heldOut = test.map((r, i) => ({ r, i })).filter(({ r }) => r.label === 0 || TEST_FAMILIES.includes(r.family));
  const heldOutAuc = rocAuc(heldOut.map(({ r }) => r.label), heldOut.map(({ i }) => scores[i] as number));
  // Attribution leaves flat records out: for flat text the service names nobody by design.
  const harmfulIdx = test
    .map((r, i) => (isAttributableHarm(r) ? i : -1))
    .filter((i) => i >= 0);
  const named = (i: number): number => (preds[i]?.predatory_user === test[i]?.predator ? 1 : 0);
  const flagged = harmfulIdx.filter((i) => (scores[i] as number) > 0.5);
  const heldOutHarmful = harmfulIdx.filter((i) => TEST_FAMILIES.includes(test[i]?.family ?? ''));
  const real = test.map((r, i) => (REAL_SOURCES.has(r.source) ? i : -1)).filter((i) => i >= 0);
  // The gap between the test split's calibration error and the validation split's shows how far
  // calibration transfers to unseen wording and families.
  const valPreds = await scoreInBatches(scorer, val.map(toRequest));
  return {
    overall,
    held_out_auc: heldOutAuc,
    attribution: mean(harmfulIdx.map(named)),
    attribution_flagged: mean(flagged.map(named)),
    attribution_held_out: mean(heldOutHarmful.map(named)),
    real,
    real_fpr: mean(real.map((i) => ((scores[i] as number) > 0.5 ? 1 : 0))),
    calibration: calibrationError(labels, scores),
    val_ece: calibrationError(val.map((r) => r.label), valPreds.map((p) => p.harmful_score)).ece,
  };
}

export interface FamilyFigures {
  n: number;
  harmful: number;
  mean_score: number;
  flagged: number;
  held_out: boolean;
}

/** Per family of the test split: its size, class, mean score and share flagged (> 0.5), rounded. */
export function familyRows(test: readonly LabeledConversation[], scores: readonly number[]): Record<string, FamilyFigures> {
  const families: Record<string, FamilyFigures> = {};
  test.forEach((r, i) => {
    const f = (families[r.family] ??= { n: 0, harmful: r.label, mean_score: 0, flagged: 0, held_out: TEST_FAMILIES.includes(r.family) });
    f.n++;
    f.mean_score += scores[i] as number;
    f.flagged += (scores[i] as number) > 0.5 ? 1 : 0;
  });
  for (const f of Object.values(families)) {
    f.mean_score = round(f.mean_score / f.n);
    f.flagged = round(f.flagged / f.n);
  }
  return families;
}

/** The test chats that came with ages, scored again without them, against their scores with them (rounded). */
export async function agesWithAndWithout(scorer: BatchScorer, test: readonly LabeledConversation[], scores: readonly number[]): Promise<Record<string, number>> {
  const withAges = test.map((r, i) => ({ r, i })).filter(({ r }) => r.age_a !== undefined || r.age_b !== undefined);
  const stripped = await scoreInBatches(scorer, withAges.map(({ r }) => ({ conversation: r.conversation })));
  const rows = withAges.map(({ r, i }, k) => ({ label: r.label, with: scores[i] as number, without: stripped[k]?.harmful_score as number }));
  const ages = {
    conversations: rows.length,
    roc_auc_with_ages: rocAuc(rows.map((a) => a.label), rows.map((a) => a.with)),
    roc_auc_without_ages: rocAuc(rows.map((a) => a.label), rows.map((a) => a.without)),
    mean_score_harmful_with: mean(rows.filter((a) => a.label === 1).map((a) => a.with)),
    mean_score_harmful_without: mean(rows.filter((a) => a.label === 1).map((a) => a.without)),
    mean_score_benign_with: mean(rows.filter((a) => a.label === 0).map((a) => a.with)),
    mean_score_benign_without: mean(rows.filter((a) => a.label === 0).map((a) => a.without)),
  };
  return Object.fromEntries(Object.entries(ages).map(([k, v]) => [k, round(v)]));
}

/** Turns read by the length rows. */
export const LENGTH_TURNS: readonly number[] = [1, 2, 4, 8, 16, 32];

/**
 * The first k turns of each synthetic test conversation with speaker turns, without ages. Flat records
 * are left out: they are one turn whatever k is, so they would sit in every row whole.
 */
export async function byLengthWithoutAges(scorer: BatchScorer, test: readonly LabeledConversation[]): Promise<Array<Record<string, number>>> {
  const synthetic = test.filter((r) => r.source === 'generator' && hasSpeakerPrefixes(r.conversation));
  const labels = synthetic.map((r) => r.label);
  const rows: Array<Record<string, number>> = [];
  for (const k of LENGTH_TURNS) {
    const s = (await scoreInBatches(scorer, synthetic.map((r) => ({ conversation: renderTurns(turnsOf(r.conversation).slice(0, k)) })))).map((x) => x.harmful_score);
    rows.push({
      turns: k,
      mean_score_harmful: round(mean(s.filter((_, i) => labels[i] === 1))),
      mean_score_benign: round(mean(s.filter((_, i) => labels[i] === 0))),
      share_mid_range: round(mean(s.map((x) => (x >= 0.2 && x < 0.8 ? 1 : 0)))),
      roc_auc: round(rocAuc(labels, s)),
    });
  }
  return rows;
}

export interface ProbeRow {
  name: string;
  label: number;
  predator: string;
  harmful_score: number;
  predicted_user: string;
  correct: boolean;
}

/** The hand-written probes (probes.ts, never from the generator), scored in one call: their predictions in order and a row each. */
export async function handwrittenProbes(scorer: BatchScorer): Promise<{ preds: Prediction[]; rows: ProbeRow[] }> {
  const preds = await scorer.score(PROBES.map(({ conversation, age_a, age_b }) => ({ conversation, age_a, age_b })));
  const rows = PROBES.map((p, i) => ({
    name: p.name,
    label: p.label,
    predator: p.predator,
    harmful_score: round(preds[i]?.harmful_score ?? Number.NaN, 3),
    predicted_user: preds[i]?.predatory_user ?? 'neither',
    correct: ((preds[i]?.harmful_score ?? 0) > 0.5 ? 1 : 0) === p.label && (p.label === 0 || preds[i]?.predatory_user === p.predator),
  }));
  return { preds, rows };
}

function fortyTurnConversation(i: number): string {
  const lines: string[] = [];
  for (let t = 0; t < 40; t++) {
    lines.push(`user${(t % 2) + 1}: message ${i}-${t} about the weekend plans and whatever else came up at school today`);
  }
  return lines.join('\n');
}

/** Conversations per second through the scorer: 2,000 40-turn conversations of ~2,500 characters, after a warm-up of 200. */
export async function throughput(scorer: BatchScorer): Promise<number> {
  const bench = Array.from({ length: 2000 }, (_, i) => ({ conversation: fortyTurnConversation(i) }));
  await scoreInBatches(scorer, bench.slice(0, 200));
  const t0 = performance.now();
  await scoreInBatches(scorer, bench);
  return bench.length / ((performance.now() - t0) / 1000);
}
