// Slices of the test split by how a record was rendered (its `tags`: flat, excerpt, short, long,
// register-shift, in-kind, hosted, thin), flat renderings of every test record (a proxy for moderator exports), and
// attribution by slice. Tags come from the data generator; a tag no record carries gives an empty row.
// Two guards live here, each with its checks, figures and report section: flat renderings and tagged
// slices (held to FLAT_TARGETS), and attribution by slice (reported).

import { parseTurns } from '../../src/scoring/conversation.ts';
import type { Prediction } from '../../src/scoring/types.ts';
import { flatten } from '../data/recut.ts';
import type { LabeledConversation } from '../data/record.ts';
import type { Probe } from './probes.ts';
import { FLAT_TARGETS, check, fmt, mark, round, type GuardCheck } from './guard.ts';
import { scoreInBatches, type BatchScorer } from './harness.ts';
import { atThreshold, cutAtFpr, mean, rocAuc } from './metrics.ts';

export const SLICE_TAGS = ['flat', 'excerpt', 'short', 'long', 'register-shift', 'in-kind', 'hosted', 'thin'] as const;

export interface SliceRow {
  slice: string;
  conversations: number;
  harmful: number;
  /** ROC-AUC within the slice; when the slice holds one class only, against the other class of the whole test split. */
  roc_auc: number;
  auc_against: 'slice' | 'all test benign' | 'all test harmful' | 'none';
  recall_at_0_5: number;
  fpr_at_0_5: number;
}

const hasTag = (r: LabeledConversation, tag: string): boolean => r.tags?.includes(tag) ?? false;

export function sliceRow(name: string, idx: readonly number[], test: readonly LabeledConversation[], scores: readonly number[]): SliceRow {
  const labels = idx.map((i) => (test[i] as LabeledConversation).label as number);
  const s = idx.map((i) => scores[i] as number);
  const harmful = labels.filter((y) => y === 1).length;
  const at = atThreshold(labels, s);
  let roc = rocAuc(labels, s);
  let against: SliceRow['auc_against'] = 'slice';
  if (idx.length === 0) against = 'none';
  else if (harmful === 0 || harmful === idx.length) {
    // One class only: rank it against the other class of the whole test split.
    const want = harmful === 0 ? 1 : 0;
    const others = test.map((r, i) => (r.label === want ? i : -1)).filter((i) => i >= 0);
    roc = rocAuc([...labels, ...others.map(() => want)], [...s, ...others.map((i) => scores[i] as number)]);
    against = others.length === 0 ? 'none' : want === 1 ? 'all test harmful' : 'all test benign';
  }
  return {
    slice: name,
    conversations: idx.length,
    harmful,
    roc_auc: roc,
    auc_against: against,
    recall_at_0_5: harmful === 0 ? Number.NaN : at.recall,
    fpr_at_0_5: harmful === idx.length ? Number.NaN : at.fpr,
  };
}

/** One row per tag in SLICE_TAGS (empty rows for tags no record carries). */
export function tagSlices(test: readonly LabeledConversation[], scores: readonly number[]): SliceRow[] {
  return SLICE_TAGS.map((tag) =>
    sliceRow(
      tag,
      test.map((r, i) => (hasTag(r, tag) ? i : -1)).filter((i) => i >= 0),
      test,
      scores,
    ),
  );
}

/** Turn counts at or above which a chat counts as long, at or below which as short, when untagged. */
export const DERIVED_LONG_TURNS = 40;
export const DERIVED_SHORT_TURNS = 4;

const turnCount = (r: LabeledConversation): number => parseTurns(r.conversation).length;

/**
 * Length slices read from the text itself (turn counts through parseTurns), so short and long chats are
 * measured even while the corpus carries no `short` / `long` tags.
 */
export function derivedSlices(test: readonly LabeledConversation[], scores: readonly number[]): SliceRow[] {
  const turns = test.map(turnCount);
  const pick = (ok: (n: number) => boolean): number[] => turns.map((n, i) => (ok(n) ? i : -1)).filter((i) => i >= 0);
  return [
    sliceRow(`derived: 1-${DERIVED_SHORT_TURNS} turns`, pick((n) => n <= DERIVED_SHORT_TURNS), test, scores),
    sliceRow(`derived: >= ${DERIVED_LONG_TURNS} turns`, pick((n) => n >= DERIVED_LONG_TURNS), test, scores),
  ];
}

export interface FamilyRow {
  family: string;
  harmful: number;
  conversations: number;
  mean_score: number;
  flagged: number;
}

/** Records tagged register-shift, per family. */
export function registerShiftFamilies(test: readonly LabeledConversation[], scores: readonly number[]): FamilyRow[] {
  const rows = new Map<string, FamilyRow>();
  test.forEach((r, i) => {
    if (!hasTag(r, 'register-shift')) return;
    const row = rows.get(r.family) ?? { family: r.family, harmful: r.label, conversations: 0, mean_score: 0, flagged: 0 };
    row.conversations++;
    row.mean_score += scores[i] as number;
    row.flagged += (scores[i] as number) > 0.5 ? 1 : 0;
    rows.set(r.family, row);
  });
  return [...rows.values()]
    .map((r) => ({ ...r, mean_score: r.mean_score / r.conversations, flagged: r.flagged / r.conversations }))
    .sort((a, b) => b.harmful - a.harmful || a.family.localeCompare(b.family));
}

export interface FlatRenderingReport extends SliceRow {
  pass: boolean;
  /** The cut that flags FLAT_TARGETS.fpr_max of the flattened benign chats, and the recall there. */
  cut_at_target_fpr: number;
  recall_at_target_fpr: number;
}

/**
 * Every test record flattened with recut.flatten (no prefixes, no line breaks), scored with its ages
 * (the guarded slice, comparable across models since 3.0.0) or, with `ages: false`, on the text alone,
 * as an export pasted into the API with nothing else would be.
 */
export async function flatRenderings(scorer: BatchScorer, test: readonly LabeledConversation[], ages = true): Promise<FlatRenderingReport> {
  const preds = await scoreInBatches(
    scorer,
    test.map((r) => ({ conversation: flatten(r.conversation), ...(ages ? { age_a: r.age_a, age_b: r.age_b } : {}) })),
  );
  const scores = preds.map((p) => p.harmful_score);
  const name = ages ? 'flat renderings (recut.flatten of every test record)' : 'flat renderings without ages';
  const row = sliceRow(name, test.map((_, i) => i), test, scores);
  const pass = row.roc_auc >= FLAT_TARGETS.roc_auc_min && row.recall_at_0_5 >= FLAT_TARGETS.recall_min && row.fpr_at_0_5 <= FLAT_TARGETS.fpr_max;
  const labels = test.map((r) => r.label);
  const cut = cutAtFpr(labels, scores, FLAT_TARGETS.fpr_max);
  return { ...row, pass, cut_at_target_fpr: cut, recall_at_target_fpr: atThreshold(labels, scores, cut).recall };
}

/**
 * True when the server reads the text as a chat with speakers (so it can name a side): asked of
 * parseTurns, since a few prefixed lines in flat text leave it flat.
 */
export function hasSpeakerPrefixes(conversation: string): boolean {
  return parseTurns(conversation).some((t) => t.speaker !== 'unknown');
}

/** A harmful record whose predator the service can name: speaker prefixes, not rendered flat. */
export function isAttributableHarm(r: LabeledConversation): boolean {
  return r.label === 1 && !hasTag(r, 'flat') && hasSpeakerPrefixes(r.conversation);
}

export interface AttributionRow {
  slice: string;
  harmful: number;
  correct: number;
  accuracy: number;
  /** Among the slice's harmful chats that the model flags (> 0.5). */
  flagged: number;
  accuracy_flagged: number;
}

function attributionRow(name: string, idx: readonly number[], test: readonly LabeledConversation[], preds: readonly Prediction[]): AttributionRow {
  const ok = (i: number): number => (preds[i]?.predatory_user === test[i]?.predator ? 1 : 0);
  const flagged = idx.filter((i) => (preds[i]?.harmful_score ?? 0) > 0.5);
  const correct = idx.reduce((s, i) => s + ok(i), 0);
  return { slice: name, harmful: idx.length, correct, accuracy: idx.length === 0 ? Number.NaN : correct / idx.length, flagged: flagged.length, accuracy_flagged: mean(flagged.map(ok)) };
}

/**
 * Attribution on harmful test chats. Flat records (tagged 'flat' or with no speaker prefix) are left
 * out: for flat text the service names nobody by design (predatory_user 'neither').
 */
export function attributionSlices(test: readonly LabeledConversation[], preds: readonly Prediction[]): AttributionRow[] {
  const harmful = test.map((r, i) => (isAttributableHarm(r) ? i : -1)).filter((i) => i >= 0);
  const rows = [attributionRow('harmful chats with speaker prefixes', harmful, test, preds)];
  for (const tag of ['long', 'in-kind', 'excerpt', 'register-shift', 'hosted', 'thin']) {
    rows.push(attributionRow(`tagged ${tag}`, harmful.filter((i) => hasTag(test[i] as LabeledConversation, tag)), test, preds));
  }
  rows.push(attributionRow(`derived: >= ${DERIVED_LONG_TURNS} turns`, harmful.filter((i) => turnCount(test[i] as LabeledConversation) >= DERIVED_LONG_TURNS), test, preds));
  return rows;
}

/** The hand-written harmful probes: predator named in N of M. */
export function probeAttribution(probes: readonly Probe[], preds: readonly Prediction[]): AttributionRow {
  const idx = probes.map((p, i) => (p.label === 1 ? i : -1)).filter((i) => i >= 0);
  const ok = (i: number): number => (preds[i]?.predatory_user === probes[i]?.predator ? 1 : 0);
  const flagged = idx.filter((i) => (preds[i]?.harmful_score ?? 0) > 0.5);
  const correct = idx.reduce((s, i) => s + ok(i), 0);
  return { slice: 'hand-written probes (probes.ts)', harmful: idx.length, correct, accuracy: correct / Math.max(1, idx.length), flagged: flagged.length, accuracy_flagged: mean(flagged.map(ok)) };
}

// ---- the guard "flat renderings and tagged slices" -----------------------------------------------

export interface SliceGuardReport {
  tag_slices: SliceRow[];
  derived_slices: SliceRow[];
  register_shift_families: FamilyRow[];
  flat_renderings: FlatRenderingReport;
  /** The same without the records' ages: reported, not guarded. */
  flat_renderings_without_ages: FlatRenderingReport;
}

/** Slices of the test split by its scores (`scores[i]` is test[i]'s), and every test record flattened and scored. */
export async function sliceGuard(scorer: BatchScorer, test: readonly LabeledConversation[], scores: readonly number[]): Promise<SliceGuardReport> {
  return {
    tag_slices: tagSlices(test, scores),
    derived_slices: derivedSlices(test, scores),
    register_shift_families: registerShiftFamilies(test, scores),
    flat_renderings: await flatRenderings(scorer, test),
    flat_renderings_without_ages: await flatRenderings(scorer, test, false),
  };
}

const tagRow = (g: SliceGuardReport, tag: string): SliceRow => g.tag_slices.find((t) => t.slice === tag) as SliceRow;

/** The guard's checks: flat renderings and the records tagged flat against FLAT_TARGETS. */
export function sliceChecks(g: SliceGuardReport): GuardCheck[] {
  const flat = g.flat_renderings;
  return [
    check('flat renderings', 'ROC-AUC', flat.roc_auc, `>= ${FLAT_TARGETS.roc_auc_min}`, (v) => v >= FLAT_TARGETS.roc_auc_min),
    check('flat renderings', 'recall at 0.5', flat.recall_at_0_5, `>= ${FLAT_TARGETS.recall_min}`, (v) => v >= FLAT_TARGETS.recall_min),
    check('flat renderings', 'FPR at 0.5', flat.fpr_at_0_5, `<= ${FLAT_TARGETS.fpr_max}`, (v) => v <= FLAT_TARGETS.fpr_max),
    check('tagged flat records', 'ROC-AUC', tagRow(g, 'flat').roc_auc, `>= ${FLAT_TARGETS.roc_auc_min}`, (v) => v >= FLAT_TARGETS.roc_auc_min),
  ];
}

/** The flat renderings' figures for report.metrics. */
export function flatFigures(g: SliceGuardReport): Record<string, number> {
  const flat = g.flat_renderings;
  const noAges = g.flat_renderings_without_ages;
  return {
    flat_roc_auc: round(flat.roc_auc),
    flat_recall_at_0_5: round(flat.recall_at_0_5),
    flat_fpr_at_0_5: round(flat.fpr_at_0_5),
    flat_cut_at_target_fpr: round(flat.cut_at_target_fpr),
    flat_recall_at_target_fpr: round(flat.recall_at_target_fpr),
    flat_without_ages_roc_auc: round(noAges.roc_auc),
    flat_without_ages_recall_at_0_5: round(noAges.recall_at_0_5),
    flat_without_ages_fpr_at_0_5: round(noAges.fpr_at_0_5),
  };
}

/** The tagged slices' figures for report.metrics. */
export function tagFigures(g: SliceGuardReport): Record<string, number> {
  return {
    ...Object.fromEntries(g.tag_slices.map((t) => [`tagged_${t.slice.replace(/-/g, '_')}_roc_auc`, round(t.roc_auc)])),
    register_shift_roc_auc: round(tagRow(g, 'register-shift').roc_auc),
  };
}

function sliceTable(rows: readonly SliceRow[]): string {
  return [
    '| slice | n | harmful | ROC-AUC | AUC against | recall at 0.5 | FPR at 0.5 |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.slice} | ${r.conversations} | ${r.harmful} | ${fmt(r.roc_auc)} | ${r.auc_against} | ${fmt(r.recall_at_0_5)} | ${fmt(r.fpr_at_0_5)} |`),
  ].join('\n');
}

/** The guard's section of the report. */
export function slicesMarkdown(g: SliceGuardReport): string {
  const fam = g.register_shift_families.map((r) => `| ${r.family} | ${r.harmful ? 'harmful' : 'benign'} | ${r.conversations} | ${fmt(r.mean_score)} | ${fmt(r.flagged)} |`);
  return `### Flat renderings and tagged slices
Flat renderings: every test record flattened with \`recut.flatten\` (no prefixes, no line breaks), a proxy for
moderator exports. Targets: ROC-AUC >= ${FLAT_TARGETS.roc_auc_min}, recall at 0.5 >= ${FLAT_TARGETS.recall_min}, FPR at 0.5 <= ${FLAT_TARGETS.fpr_max}: **${mark(g.flat_renderings.pass)}**.
At the cut that flags ${FLAT_TARGETS.fpr_max} of the flattened benign chats (${fmt(g.flat_renderings.cut_at_target_fpr)}), recall is ${fmt(g.flat_renderings.recall_at_target_fpr)}:
models compared there differ in how they rank, not in where calibration puts 0.5. The targets apply to the
renderings scored with the records' ages, as since 3.0.0; the row without ages (text alone, as an export
pasted into the API with nothing else) is reported beside it.
Tagged slices use the corpus's \`tags\` (empty when no record carries the tag); \`derived\` rows count turns through
\`parseTurns\` instead. A slice with one class only is ranked against the other class of the whole test split.

${sliceTable([g.flat_renderings, g.flat_renderings_without_ages, ...g.tag_slices, ...g.derived_slices])}

Register-shift records per family:
${fam.length === 0 ? '(no test record is tagged register-shift)' : ['| family | class | n | mean score | share > 0.5 |', '|---|---|---|---|---|', ...fam].join('\n')}`;
}

// ---- the guard "attribution by slice" (reported, not guarded) ------------------------------------

/** Attribution on the attributable harmful test chats by slice, then on the hand-written probes (last row). */
export function attributionGuard(test: readonly LabeledConversation[], testPreds: readonly Prediction[], probes: readonly Probe[], probePreds: readonly Prediction[]): AttributionRow[] {
  return [...attributionSlices(test, testPreds), probeAttribution(probes, probePreds)];
}

/** The guard's figures for report.metrics. */
export function attributionFigures(rows: readonly AttributionRow[]): Record<string, number> {
  return {
    attribution_accuracy_prefixed: round(rows[0]?.accuracy ?? Number.NaN),
    attribution_accuracy_long: round(rows.find((a) => a.slice === 'tagged long')?.accuracy ?? Number.NaN),
    attribution_accuracy_in_kind: round(rows.find((a) => a.slice === 'tagged in-kind')?.accuracy ?? Number.NaN),
    probes_predator_named: round(rows[rows.length - 1]?.accuracy ?? Number.NaN),
  };
}

/** The guard's section of the report. */
export function attributionMarkdown(rows: readonly AttributionRow[]): string {
  return `### Attribution by slice
Flat records (tagged \`flat\`, or with no speaker prefix) are excluded: for flat text the service names
nobody by design (\`predatory_user\` 'neither').

| slice | harmful | predator named | accuracy | flagged | accuracy among flagged |
|---|---|---|---|---|---|
${rows.map((a) => `| ${a.slice} | ${a.harmful} | ${a.correct} of ${a.harmful} | ${fmt(a.accuracy)} | ${a.flagged} | ${fmt(a.accuracy_flagged)} |`).join('\n')}`;
}
