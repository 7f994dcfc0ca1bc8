// The shortcut guards of the evaluation (issue "The model reads real chats"), gathered for run.ts:
// structure-only baseline, re-cut invariance, short chats, tag slices and flat renderings, sparse
// grooming in real chats, long repeated small talk, attribution by slice. Each guard lives in its
// own module; this one runs them, states each target next to its figure with an honest PASS/FAIL,
// and renders the markdown sections.

import type { Prediction } from '../../src/scoring/types.ts';
import type { LabeledConversation } from '../data/record.ts';
import {
  LONG_TALK_BENIGN,
  LONG_TALK_INSERTED,
  LONG_TALK_LENGTHS,
  LONG_TALK_LINES,
  LONG_TALK_POOL,
  LONG_TALK_TARGETS,
  MENTION_LINES,
  evaluateLongSmallTalk,
  type LongTalkRow,
} from './long-small-talk.ts';
import { mean } from './metrics.ts';
import { PROBES } from './probes.ts';
import { RECUT_MAX_MOVE, RECUT_SAMPLE, RECUT_TARGET_SHARE, recutInvariance, type BatchScorer, type RecutReport } from './recut-invariance.ts';
import { SHORT_TARGETS, evaluateShortChats, type ShortChatReport } from './short-chats.ts';
import {
  FLAT_TARGETS,
  attributionSlices,
  flatRenderings,
  probeAttribution,
  registerShiftFamilies,
  derivedSlices,
  tagSlices,
  type AttributionRow,
  type FamilyRow,
  type FlatRenderingReport,
  type SliceRow,
} from './slices.ts';
import {
  SPARSE_GUARDED,
  SPARSE_GUARDED_LABEL,
  SPARSE_LINES,
  SPARSE_MIN_TURNS,
  SPARSE_MOVE_RENDERINGS,
  SPARSE_MOVE_REPEATS,
  evaluateSparseGrooming,
  evaluateSparseMoves,
  lengthBandKey,
  lengthBandLabel,
  movesRecognised,
  type SparseLengthBand,
  type SparseMoveRow,
  type SparseRow,
} from './sparse-grooming.ts';
import { STRUCTURE_TARGET_MAX_AUC, structureBaselineAuc, type StructureBaselineResult } from './structure-baseline.ts';

export interface GuardCheck {
  guard: string;
  figure: string;
  value: number;
  target: string;
  /** null when the figure could not be measured (e.g. no record carries the tag). */
  pass: boolean | null;
}

export interface GuardsReport {
  checks: GuardCheck[];
  structure_baseline: StructureBaselineResult;
  structure_baseline_generated_only: StructureBaselineResult;
  recut_invariance: RecutReport;
  short_chats: ShortChatReport;
  tag_slices: SliceRow[];
  derived_slices: SliceRow[];
  register_shift_families: FamilyRow[];
  flat_renderings: FlatRenderingReport;
  /** The same without the records' ages: reported, not guarded. */
  flat_renderings_without_ages: FlatRenderingReport;
  sparse_grooming: SparseRow[];
  /** Each sparse line alone, said a few times: reported, not guarded. */
  sparse_moves: SparseMoveRow[];
  long_small_talk: LongTalkRow[];
  attribution: AttributionRow[];
  /** Flat numbers for report.metrics (and so for the ablation table, the manifest and the card). */
  metrics: Record<string, number>;
}

export interface GuardInputs {
  scorer: BatchScorer;
  train: readonly LabeledConversation[];
  test: readonly LabeledConversation[];
  /** The scorer's predictions for `test`, in order (already computed by run.ts). */
  testPreds: readonly Prediction[];
  /** The scorer's predictions for PROBES, in order. */
  probePreds: readonly Prediction[];
  recutSample?: number;
}

const r4 = (x: number): number => (Number.isFinite(x) ? Math.round(x * 10000) / 10000 : x);

function check(guard: string, figure: string, value: number, target: string, ok: (v: number) => boolean): GuardCheck {
  return { guard, figure, value: r4(value), target, pass: Number.isFinite(value) ? ok(value) : null };
}

export async function runGuards(o: GuardInputs): Promise<GuardsReport> {
  const scores = o.testPreds.map((p) => p.harmful_score);
  const structure = structureBaselineAuc(o.train, o.test);
  // The same baseline on generated chats only: real benign chats differ from synthetic ones in layout
  // anyway, so this row says how much of the leak is the generator's own.
  const generated = (r: LabeledConversation): boolean => r.source === 'generator';
  const structureGenerated = structureBaselineAuc(o.train.filter(generated), o.test.filter(generated));
  const recut = await recutInvariance(o.scorer, o.test, o.recutSample ?? RECUT_SAMPLE);
  const short = await evaluateShortChats(o.scorer);
  const tags = tagSlices(o.test, scores);
  const derived = derivedSlices(o.test, scores);
  const families = registerShiftFamilies(o.test, scores);
  const flat = await flatRenderings(o.scorer, o.test);
  const flatNoAges = await flatRenderings(o.scorer, o.test, false);
  const sparse = await evaluateSparseGrooming(o.scorer, o.test, flat.cut_at_target_fpr);
  const moves = await evaluateSparseMoves(o.scorer, o.test);
  const guardedSparse = sparse.find((r) => r.lines === SPARSE_GUARDED.lines && r.rendering === SPARSE_GUARDED.rendering);
  const longTalk = await evaluateLongSmallTalk(o.scorer);
  const attribution = [...attributionSlices(o.test, o.testPreds), probeAttribution(PROBES, o.probePreds)];
  const tag = (name: string): SliceRow => tags.find((t) => t.slice === name) as SliceRow;

  const checks: GuardCheck[] = [
    check('structure-only baseline', 'test ROC-AUC', structure.roc_auc, `<= ${STRUCTURE_TARGET_MAX_AUC}`, (v) => v <= STRUCTURE_TARGET_MAX_AUC),
    ...recut.rows
      .filter((r) => r.guarded)
      .map((r) => check('re-cut invariance', `${r.recut}: share moving < ${RECUT_MAX_MOVE}`, r.share_stable, `>= ${RECUT_TARGET_SHARE}`, (v) => v >= RECUT_TARGET_SHARE)),
    check('short chats', 'benign flagged (> 0.5)', short.benign_flagged, `<= ${SHORT_TARGETS.benign_flagged_max}`, (v) => v <= SHORT_TARGETS.benign_flagged_max),
    check('short chats', 'benign High Risk or Critical (>= 0.6)', short.benign_high_or_critical, '= 0', (v) => v <= SHORT_TARGETS.benign_high_or_critical_max),
    check('short chats', 'max benign score (floor)', short.benign_max_score, `<= ${SHORT_TARGETS.benign_max_score}`, (v) => v <= SHORT_TARGETS.benign_max_score),
    check('short chats', 'ROC-AUC predatory vs benign', short.roc_auc_predatory_vs_benign, `>= ${SHORT_TARGETS.roc_auc_min}`, (v) => v >= SHORT_TARGETS.roc_auc_min),
    check('flat renderings', 'ROC-AUC', flat.roc_auc, `>= ${FLAT_TARGETS.roc_auc_min}`, (v) => v >= FLAT_TARGETS.roc_auc_min),
    check('flat renderings', 'recall at 0.5', flat.recall_at_0_5, `>= ${FLAT_TARGETS.recall_min}`, (v) => v >= FLAT_TARGETS.recall_min),
    check('flat renderings', 'FPR at 0.5', flat.fpr_at_0_5, `<= ${FLAT_TARGETS.fpr_max}`, (v) => v <= FLAT_TARGETS.fpr_max),
    check('tagged flat records', 'ROC-AUC', tag('flat').roc_auc, `>= ${FLAT_TARGETS.roc_auc_min}`, (v) => v >= FLAT_TARGETS.roc_auc_min),
    check('sparse grooming in real chats', `${SPARSE_GUARDED_LABEL}: ROC-AUC`, guardedSparse?.roc_auc ?? Number.NaN, `>= ${FLAT_TARGETS.roc_auc_min}`, (v) => v >= FLAT_TARGETS.roc_auc_min),
    check('sparse grooming in real chats', `${SPARSE_GUARDED_LABEL}: recall at 0.5`, guardedSparse?.recall_at_0_5 ?? Number.NaN, `>= ${FLAT_TARGETS.recall_min}`, (v) => v >= FLAT_TARGETS.recall_min),
    check('sparse grooming in real chats', `${SPARSE_GUARDED_LABEL}: FPR at 0.5`, guardedSparse?.fpr_at_0_5 ?? Number.NaN, `<= ${FLAT_TARGETS.fpr_max}`, (v) => v <= FLAT_TARGETS.fpr_max),
    ...longTalk
      .filter((r) => LONG_TALK_BENIGN.includes(r.variant))
      .map((r) => check('long repeated small talk', `${r.variant}, ${r.rendering}: flagged`, r.flagged, `<= ${LONG_TALK_TARGETS.benign_flagged_max}`, (v) => v <= LONG_TALK_TARGETS.benign_flagged_max)),
  ];

  const metrics: Record<string, number> = {
    structure_baseline_roc_auc: r4(structure.roc_auc),
    structure_baseline_roc_auc_generated_only: r4(structureGenerated.roc_auc),
    recut_min_share_stable: r4(recut.min_share_stable),
    ...Object.fromEntries(recut.rows.flatMap((r) => [
      [`recut_share_stable_${r.recut}`, r4(r.share_stable)],
      [`recut_share_stable_changed_${r.recut}`, r4(r.share_stable_changed)],
      [`recut_roc_auc_${r.recut}`, r4(r.roc_auc)],
    ])),
    short_benign_flagged: r4(short.benign_flagged),
    short_benign_high_or_critical: r4(short.benign_high_or_critical),
    short_benign_max_score: r4(short.benign_max_score),
    short_predatory_vs_benign_roc_auc: r4(short.roc_auc_predatory_vs_benign),
    short_predator_named: r4(short.predator_named),
    flat_roc_auc: r4(flat.roc_auc),
    flat_recall_at_0_5: r4(flat.recall_at_0_5),
    flat_fpr_at_0_5: r4(flat.fpr_at_0_5),
    flat_cut_at_target_fpr: r4(flat.cut_at_target_fpr),
    flat_recall_at_target_fpr: r4(flat.recall_at_target_fpr),
    flat_without_ages_roc_auc: r4(flatNoAges.roc_auc),
    flat_without_ages_recall_at_0_5: r4(flatNoAges.recall_at_0_5),
    flat_without_ages_fpr_at_0_5: r4(flatNoAges.fpr_at_0_5),
    ...Object.fromEntries(sparse.flatMap((r) => {
      const key = `sparse_${r.lines}_${r.rendering.replace(/ /g, '_')}`;
      return [
        [`${key}_roc_auc`, r4(r.roc_auc)],
        [`${key}_recall_at_0_5`, r4(r.recall_at_0_5)],
        [`${key}_fpr_at_0_5`, r4(r.fpr_at_0_5)],
        [`${key}_recall_at_flat_cut`, r4(r.recall_at_flat_cut)],
        [`${key}_recall_at_host_cut`, r4(r.recall_at_host_cut)],
        ...(r === guardedSparse
          ? [[`${key}_host_cut`, r4(r.host_cut)], ...r.recall_by_length.map((b) => [`${key}_recall_at_0_5_${lengthBandKey(b)}`, r4(b.recall_at_0_5)])]
          : []),
      ];
    })),
    ...Object.fromEntries(SPARSE_MOVE_RENDERINGS.flatMap((rendering) => {
      const rows = moves.filter((r) => r.rendering === rendering);
      const key = rendering.replace(/ /g, '_');
      return rows.length === 0 ? [] : [
        [`sparse_moves_recognised_${key}`, movesRecognised(moves, rendering)],
        [`sparse_moves_mean_flagged_${key}`, r4(mean(rows.map((r) => r.flagged)))],
      ];
    })),
    ...Object.fromEntries(longTalk.flatMap((r) => {
      const key = `long_talk_${r.variant.replace(/ /g, '_')}_${r.rendering.replace(/ /g, '_')}`;
      return [
        [`${key}_flagged`, r4(r.flagged)],
        [`${key}_max_score`, r4(r.max_score)],
        ...(r.variant === 'untouched' ? [] : [[`${key}_roc_auc`, r4(r.roc_auc)]]),
      ];
    })),
    ...Object.fromEntries(tags.map((t) => [`tagged_${t.slice.replace(/-/g, '_')}_roc_auc`, r4(t.roc_auc)])),
    register_shift_roc_auc: r4(tag('register-shift').roc_auc),
    attribution_accuracy_prefixed: r4(attribution[0]?.accuracy ?? Number.NaN),
    attribution_accuracy_long: r4(attribution.find((a) => a.slice === 'tagged long')?.accuracy ?? Number.NaN),
    attribution_accuracy_in_kind: r4(attribution.find((a) => a.slice === 'tagged in-kind')?.accuracy ?? Number.NaN),
    probes_predator_named: r4(attribution[attribution.length - 1]?.accuracy ?? Number.NaN),
  };
  return {
    checks,
    structure_baseline: structure,
    structure_baseline_generated_only: structureGenerated,
    recut_invariance: recut,
    short_chats: short,
    tag_slices: tags,
    derived_slices: derived,
    register_shift_families: families,
    flat_renderings: flat,
    flat_renderings_without_ages: flatNoAges,
    sparse_grooming: sparse,
    sparse_moves: moves,
    long_small_talk: longTalk,
    attribution,
    metrics,
  };
}

const f = (x: number, d = 3): string => (Number.isFinite(x) ? String(Math.round(x * 10 ** d) / 10 ** d) : 'n/a');
const mark = (p: boolean | null): string => (p === null ? 'n/a' : p ? 'PASS' : 'FAIL');

function sliceTable(rows: readonly SliceRow[]): string {
  return [
    '| slice | n | harmful | ROC-AUC | AUC against | recall at 0.5 | FPR at 0.5 |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.slice} | ${r.conversations} | ${r.harmful} | ${f(r.roc_auc)} | ${r.auc_against} | ${f(r.recall_at_0_5)} | ${f(r.fpr_at_0_5)} |`),
  ].join('\n');
}

export function guardsMarkdown(g: GuardsReport): string {
  const s = g.short_chats;
  const rc = g.recut_invariance;
  const fam = g.register_shift_families.map((r) => `| ${r.family} | ${r.harmful ? 'harmful' : 'benign'} | ${r.conversations} | ${f(r.mean_score)} | ${f(r.flagged)} |`);
  return `## Shortcut guards
Checks that the model reads content rather than layout (issue "The model reads real chats"). Every
target is stated next to its figure; n/a means nothing in this corpus could measure it.

| guard | figure | value | target | result |
|---|---|---|---|---|
${g.checks.map((c) => `| ${c.guard} | ${c.figure} | ${f(c.value)} | ${c.target} | ${mark(c.pass)} |`).join('\n')}

### Structure-only baseline
L2 logistic regression (Newton, standardized on train) on ${g.structure_baseline.features.length} features read only through
\`parseTurns\` and character classes, no words; trained on ${g.structure_baseline.train} train conversations,
tested on ${g.structure_baseline.test}. Test ROC-AUC **${f(g.structure_baseline.roc_auc)}** (target <= ${STRUCTURE_TARGET_MAX_AUC};
above it the generator leaks the label through structure). On generated chats only (no real chats in
train or test): **${f(g.structure_baseline_generated_only.roc_auc)}** (${g.structure_baseline_generated_only.test} test conversations). Standardized weights (all chats):
${Object.entries(g.structure_baseline.weights).map(([k, v]) => `\`${k}\` ${v}`).join(', ')}.

### Re-cut invariance
${rc.conversations} test conversations (deterministic subsample by id hash), each scored as written and re-cut
(ages unchanged). ROC-AUC as written: ${f(rc.roc_auc_original)}. Target: for every guarded re-cut, >= ${RECUT_TARGET_SHARE} of
conversations move by < ${RECUT_MAX_MOVE}. \`alternating_word_lines\` (flat text re-cut into 4-word lines under
alternating made-up speakers) is reported, not guarded. The share counts every conversation, as the
issue's rule does, including those a re-cut leaves as they were (flattening a flat chat, merging where
no speaker writes twice in a row); the next columns count only the conversations whose turns (speaker and words) the re-cut changed.

| re-cut | guarded | share moving < ${RECUT_MAX_MOVE} | changed by the re-cut | share moving < ${RECUT_MAX_MOVE}, changed only | mean abs move | ROC-AUC of rendering | result |
|---|---|---|---|---|---|---|---|
${rc.rows.map((r) => `| ${r.recut} | ${r.guarded ? 'yes' : 'no'} | ${f(r.share_stable)} | ${r.changed} | ${f(r.share_stable_changed)} | ${f(r.mean_abs_move)} | ${f(r.roc_auc)} | ${r.guarded ? mark(r.pass) : '-'} |`).join('\n')}

### Short chats (hand-written, never trained on)
${s.benign} benign 1-4 turn chats (the issue's \`user1: hi\`, \`user1: lol\\nuser2: lmao\`... and seeded combinations)
and ${s.predatory} predatory openers. Benign flagged (> 0.5): **${f(s.benign_flagged)}** (target <= ${SHORT_TARGETS.benign_flagged_max});
High Risk or Critical (>= 0.6): **${f(s.benign_high_or_critical)}** (target 0); max benign score **${f(s.benign_max_score)}**
(floor ${SHORT_TARGETS.benign_max_score}); mean benign score ${f(s.benign_mean_score)}. Predatory openers flagged: ${f(s.predatory_recall_at_0_5)};
ROC-AUC predatory vs benign **${f(s.roc_auc_predatory_vs_benign)}** (target >= ${SHORT_TARGETS.roc_auc_min}); predator named in ${s.predatory_flagged_named}.

Highest-scoring benign short chats:
${s.worst_benign.map((w) => `- ${w.harmful_score}: \`${w.conversation.replace(/\n/g, ' / ')}\``).join('\n')}

### Flat renderings and tagged slices
Flat renderings: every test record flattened with \`recut.flatten\` (no prefixes, no line breaks), a proxy for
moderator exports. Targets: ROC-AUC >= ${FLAT_TARGETS.roc_auc_min}, recall at 0.5 >= ${FLAT_TARGETS.recall_min}, FPR at 0.5 <= ${FLAT_TARGETS.fpr_max}: **${mark(g.flat_renderings.pass)}**.
At the cut that flags ${FLAT_TARGETS.fpr_max} of the flattened benign chats (${f(g.flat_renderings.cut_at_target_fpr)}), recall is ${f(g.flat_renderings.recall_at_target_fpr)}:
models compared there differ in how they rank, not in where calibration puts 0.5. The targets apply to the
renderings scored with the records' ages, as since 3.0.0; the row without ages (text alone, as an export
pasted into the API with nothing else) is reported beside it.
Tagged slices use the corpus's \`tags\` (empty when no record carries the tag); \`derived\` rows count turns through
\`parseTurns\` instead. A slice with one class only is ranked against the other class of the whole test split.

${sliceTable([g.flat_renderings, g.flat_renderings_without_ages, ...g.tag_slices, ...g.derived_slices])}

Register-shift records per family:
${fam.length === 0 ? '(no test record is tagged register-shift)' : ['| family | class | n | mean score | share > 0.5 |', '|---|---|---|---|---|', ...fam].join('\n')}

### Sparse grooming in real chats
${g.sparse_grooming[0]?.pairs ?? 0} held-out real benign test chats as written (at least ${SPARSE_MIN_TURNS} turns), each scored untouched and with 3 or 5 of
${SPARSE_LINES.length} hand-written predatory lines (age, being alone, secrecy, pictures, camera, another app, gifts,
meeting; never in training) inserted by one speaker at seeded places: a proxy for the issue's real
moderator exports, where grooming is a few lines among everyday talk. FPR counts the same chats
untouched, rendered the same way. *merged runs* joins each speaker's consecutive lines into one turn, as
some clients export a burst, so an inserted line rides inside a long turn of everyday talk. Targets
(the issue's for real flat exports) apply to ${SPARSE_GUARDED_LABEL}.
The flat cut is the one above (${f(g.flat_renderings.cut_at_target_fpr)}), at which ${FLAT_TARGETS.fpr_max} of the flattened benign test chats are flagged
(the generator's hard negatives among them). The host cut is the row's own, at which ${FLAT_TARGETS.fpr_max} of its untouched
real hosts are flagged: the issue's "${FLAT_TARGETS.recall_min} flagged with <= ${FLAT_TARGETS.fpr_max} of the other excerpts flagged" read
against real benign chats alone (reported, not guarded; the guard is at 0.5, one threshold for every chat).

| lines | rendering | pairs | median characters | ROC-AUC | recall at 0.5 | FPR at 0.5 | recall / FPR at the flat cut | host cut; recall there | predator named (flagged) |
|---|---|---|---|---|---|---|---|---|---|
${g.sparse_grooming.map((r) => `| ${r.lines} | ${r.rendering} | ${r.pairs} | ${r.median_characters} | ${f(r.roc_auc)} | ${f(r.recall_at_0_5)} | ${f(r.fpr_at_0_5)} | ${f(r.recall_at_flat_cut)} / ${f(r.fpr_at_flat_cut)} | ${f(r.host_cut)}; ${f(r.recall_at_host_cut)} | ${f(r.predator_named_flagged)} |`).join('\n')}
${sparseLengthLine(g.sparse_grooming)}

One move alone: each line said ${SPARSE_MOVE_REPEATS} times by one speaker in every host (the same places and speaker for
every line), nothing else added, so the rows show which moves the model reads on their own and which
only beside others (reported, not guarded: a friend's secret is no grooming by itself, but a
moderator should know what goes unseen).
${g.sparse_moves.length === 0 ? '' : `Moves that flag at least half of their chats: ${SPARSE_MOVE_RENDERINGS.map((r) => `${r} ${movesRecognised(g.sparse_moves, r)} of ${SPARSE_LINES.length}`).join(', ')}.`}

${sparseMoveTable(g.sparse_moves)}

### Long repeated small talk
${g.long_small_talk[0]?.chats ?? 0} long benign chats composed for the eval (never in training) of ${LONG_TALK_POOL.min} to ${LONG_TALK_POOL.max} everyday lines, drawn once per chat
from ${LONG_TALK_LINES.length} (\`hey\`, \`wyd\`, \`just got back from school\`, \`gtg eat brb\`; about half are small talk the generator
writes too), said again and again for ${Math.min(...LONG_TALK_LENGTHS)} to ${Math.max(...LONG_TALK_LENGTHS)} messages, as friends who chat every day write. Each is
scored untouched, with one everyday mention that shares grooming's words (one of ${MENTION_LINES.length}, such as
${MENTION_LINES.slice(0, 3).map((m) => `\`${m}\``).join(', ')}, once; benign), and with ${LONG_TALK_INSERTED} of the sparse slice's predatory lines by one
speaker. Target: the benign variants flagged (> 0.5) <= ${LONG_TALK_TARGETS.benign_flagged_max}. ROC-AUC ranks each variant against the untouched
chats rendered alike.

| variant | rendering | chats | median characters | flagged | max score | ROC-AUC against untouched |
|---|---|---|---|---|---|---|
${g.long_small_talk.map((r) => `| ${r.variant} | ${r.rendering} | ${r.chats} | ${r.median_characters} | ${f(r.flagged)} | ${f(r.max_score)} | ${r.variant === 'untouched' ? '-' : f(r.roc_auc)} |`).join('\n')}

Mentions that raised their chats most (mean rise over the same chats untouched; a few chats each):
${g.long_small_talk.filter((r) => r.top_mentions !== undefined).map((r) => `- ${r.rendering}: ${(r.top_mentions ?? []).map((m) => `\`${m.line}\` ${m.mean_rise >= 0 ? '+' : ''}${f(m.mean_rise)} (${m.chats})`).join(', ')}`).join('\n')}

### Attribution by slice
Flat records (tagged \`flat\`, or with no speaker prefix) are excluded: for flat text the service names
nobody by design (\`predatory_user\` 'neither').

| slice | harmful | predator named | accuracy | flagged | accuracy among flagged |
|---|---|---|---|---|---|
${g.attribution.map((a) => `| ${a.slice} | ${a.harmful} | ${a.correct} of ${a.harmful} | ${f(a.accuracy)} | ${a.flagged} | ${f(a.accuracy_flagged)} |`).join('\n')}
`;
}

/** The guarded row's recall by length: the slice's chats are shorter than the issue's exports (about 2,800 characters). */
function sparseLengthLine(rows: readonly SparseRow[]): string {
  const row = rows.find((r) => r.lines === SPARSE_GUARDED.lines && r.rendering === SPARSE_GUARDED.rendering);
  if (row === undefined) return '';
  const band = (b: SparseLengthBand): string => `${lengthBandLabel(b)} characters ${f(b.recall_at_0_5)} (${b.chats} chats)`;
  return `\n${SPARSE_GUARDED_LABEL}, recall at 0.5 by the chat's length (the issue's exports run to about 2,800 characters): ${row.recall_by_length.map(band).join('; ')}.`;
}

/** One row per line, weakest first (by its chats flagged over both renderings), a flagged share and mean score per rendering. */
function sparseMoveTable(rows: readonly SparseMoveRow[]): string {
  if (rows.length === 0) return '(no host in the test split)';
  const lines = [...new Set(rows.map((r) => r.line))];
  const of = (line: string): SparseMoveRow[] => SPARSE_MOVE_RENDERINGS.map((rendering) => rows.find((r) => r.line === line && r.rendering === rendering) as SparseMoveRow);
  const sum = (line: string): number => of(line).reduce((a, r) => a + r.flagged, 0);
  lines.sort((a, b) => sum(a) - sum(b) || SPARSE_LINES.indexOf(a) - SPARSE_LINES.indexOf(b));
  return [
    `| line | ${SPARSE_MOVE_RENDERINGS.map((r) => `${r}: flagged, mean score`).join(' | ')} |`,
    `|---|${SPARSE_MOVE_RENDERINGS.map(() => '---').join('|')}|`,
    ...lines.map((line) => `| \`${line}\` | ${of(line).map((r) => `${f(r.flagged)}, ${f(r.mean_score)}`).join(' | ')} |`),
  ].join('\n');
}
