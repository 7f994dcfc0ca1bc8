// The shortcut guards of the evaluation (issue "The model reads real chats"), listed for run.ts.
// Each guard lives in its own module with what it measures, its checks (each target stated next to its
// figure with an honest PASS/FAIL), its figures for report.metrics and its section of the report:
//
//   structure-only baseline          structure-baseline.ts   structureGuard, structureChecks, structureFigures, structureMarkdown
//   re-cut invariance                recut-invariance.ts     recutInvariance, recutChecks, recutFigures, recutMarkdown
//   short chats                      short-chats.ts          evaluateShortChats, shortChatChecks, shortChatFigures, shortChatsMarkdown
//   flat renderings, tagged slices   slices.ts               sliceGuard, sliceChecks, flatFigures + tagFigures, slicesMarkdown
//   sparse grooming in real chats    sparse-grooming.ts      sparseGuard, sparseChecks, sparseFigures, sparseMarkdown
//   long repeated small talk         long-small-talk.ts      evaluateLongSmallTalk, longTalkChecks, longTalkFigures, longTalkMarkdown
//   attribution by slice             slices.ts               attributionGuard, attributionFigures, attributionMarkdown (reported only)
//
// This module runs them in that order and puts their parts together; it measures nothing itself.

import type { Prediction } from '../../src/scoring/types.ts';
import type { LabeledConversation } from '../data/record.ts';
import { fmt, mark, type GuardCheck } from './guard.ts';
import type { BatchScorer } from './harness.ts';
import { evaluateLongSmallTalk, longTalkChecks, longTalkFigures, longTalkMarkdown, type LongTalkRow } from './long-small-talk.ts';
import { PROBES } from './probes.ts';
import { RECUT_SAMPLE, recutChecks, recutFigures, recutInvariance, recutMarkdown, type RecutReport } from './recut-invariance.ts';
import { evaluateShortChats, shortChatChecks, shortChatFigures, shortChatsMarkdown, type ShortChatReport } from './short-chats.ts';
import {
  attributionFigures,
  attributionGuard,
  attributionMarkdown,
  flatFigures,
  sliceChecks,
  sliceGuard,
  slicesMarkdown,
  tagFigures,
  type AttributionRow,
  type SliceGuardReport,
} from './slices.ts';
import { sparseChecks, sparseFigures, sparseGuard, sparseMarkdown, type SparseGuardReport } from './sparse-grooming.ts';
import { structureChecks, structureFigures, structureGuard, structureMarkdown, type StructureGuardReport } from './structure-baseline.ts';

/** Every guard's report, key by key as eval.json holds it under `guards`. */
export interface GuardsReport extends StructureGuardReport, SliceGuardReport, SparseGuardReport {
  checks: GuardCheck[];
  recut_invariance: RecutReport;
  short_chats: ShortChatReport;
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

export async function runGuards(o: GuardInputs): Promise<GuardsReport> {
  const scores = o.testPreds.map((p) => p.harmful_score);
  const structure = structureGuard(o.train, o.test);
  const recut = await recutInvariance(o.scorer, o.test, o.recutSample ?? RECUT_SAMPLE);
  const short = await evaluateShortChats(o.scorer);
  const slices = await sliceGuard(o.scorer, o.test, scores);
  const sparse = await sparseGuard(o.scorer, o.test, slices.flat_renderings.cut_at_target_fpr);
  const longTalk = await evaluateLongSmallTalk(o.scorer);
  const attribution = attributionGuard(o.test, o.testPreds, PROBES, o.probePreds);
  return {
    checks: [...structureChecks(structure), ...recutChecks(recut), ...shortChatChecks(short), ...sliceChecks(slices), ...sparseChecks(sparse), ...longTalkChecks(longTalk)],
    ...structure,
    recut_invariance: recut,
    short_chats: short,
    ...slices,
    ...sparse,
    long_small_talk: longTalk,
    attribution,
    // The tagged slices' figures follow long small talk's: the order report.metrics has always had.
    metrics: {
      ...structureFigures(structure),
      ...recutFigures(recut),
      ...shortChatFigures(short),
      ...flatFigures(slices),
      ...sparseFigures(sparse),
      ...longTalkFigures(longTalk),
      ...tagFigures(slices),
      ...attributionFigures(attribution),
    },
  };
}

/** The report's "Shortcut guards" section: every check in one table, then each guard's own section. */
export function guardsMarkdown(g: GuardsReport): string {
  const summary = `## Shortcut guards
Checks that the model reads content rather than layout (issue "The model reads real chats"). Every
target is stated next to its figure; n/a means nothing in this corpus could measure it.

| guard | figure | value | target | result |
|---|---|---|---|---|
${g.checks.map((c) => `| ${c.guard} | ${c.figure} | ${fmt(c.value)} | ${c.target} | ${mark(c.pass)} |`).join('\n')}`;
  const sections = [
    structureMarkdown(g),
    recutMarkdown(g.recut_invariance),
    shortChatsMarkdown(g.short_chats),
    slicesMarkdown(g),
    sparseMarkdown(g, g.flat_renderings.cut_at_target_fpr),
    longTalkMarkdown(g.long_small_talk),
    attributionMarkdown(g.attribution),
  ];
  return `${[summary, ...sections].join('\n\n')}\n`;
}
