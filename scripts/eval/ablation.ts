// Ablation table: one row per evaluated run (each an eval.json written by run.ts), the headline and
// shortcut-guard figures side by side.
//
//   node scripts/eval/run.ts --model A --no-card --no-manifest --no-plots --quick --out reports/ablation/a
//   node scripts/eval/ablation.ts --row "wordpiece, random init=reports/ablation/a/eval.json" \
//        --row "hybrid + GloVe=reports/ablation/b/eval.json" [--out reports/ablation.md]

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { FLAT_TARGETS } from './guard.ts';
import { RECUT_TARGET_SHARE } from './recut-invariance.ts';
import { SHORT_TARGETS } from './short-chats.ts';
import { STRUCTURE_TARGET_MAX_AUC } from './structure-baseline.ts';

/** The part of eval.json this table reads; figures a run did not measure are null or absent. */
export interface EvalReportLike {
  model?: { name?: string; version?: string };
  metrics: Record<string, number | null | undefined>;
}

interface Column {
  title: string;
  /** Key(s) in report.metrics; two keys render as "a / b". */
  keys: string[];
  /** Returns false when the value misses its target (marked ✗); undefined for no target. */
  ok?: (v: number, key: string) => boolean;
  target?: string;
}

export const COLUMNS: readonly Column[] = [
  { title: 'test ROC-AUC', keys: ['roc_auc'], ok: (v) => v >= 0.97, target: '>= 0.97' },
  { title: 'held-out families ROC-AUC', keys: ['roc_auc_held_out_families'] },
  { title: 'register-shift ROC-AUC', keys: ['register_shift_roc_auc'] },
  { title: 'flat ROC-AUC', keys: ['flat_roc_auc'], ok: (v) => v >= FLAT_TARGETS.roc_auc_min, target: `>= ${FLAT_TARGETS.roc_auc_min}` },
  {
    title: 'flat recall@0.5 / FPR@0.5',
    keys: ['flat_recall_at_0_5', 'flat_fpr_at_0_5'],
    ok: (v, k) => (k === 'flat_recall_at_0_5' ? v >= FLAT_TARGETS.recall_min : v <= FLAT_TARGETS.fpr_max),
    target: `>= ${FLAT_TARGETS.recall_min} / <= ${FLAT_TARGETS.fpr_max}`,
  },
  { title: 'short benign flagged', keys: ['short_benign_flagged'], ok: (v) => v <= SHORT_TARGETS.benign_flagged_max, target: `<= ${SHORT_TARGETS.benign_flagged_max}` },
  {
    title: 'short benign max score',
    keys: ['short_benign_max_score'],
    ok: (v) => v <= SHORT_TARGETS.benign_max_score,
    target: `<= ${SHORT_TARGETS.benign_max_score}`,
  },
  {
    title: 'short predatory vs benign ROC-AUC',
    keys: ['short_predatory_vs_benign_roc_auc'],
    ok: (v) => v >= SHORT_TARGETS.roc_auc_min,
    target: `>= ${SHORT_TARGETS.roc_auc_min}`,
  },
  { title: 're-cut invariance (min share < 0.15)', keys: ['recut_min_share_stable'], ok: (v) => v >= RECUT_TARGET_SHARE, target: `>= ${RECUT_TARGET_SHARE}` },
  { title: 'attribution', keys: ['attribution_accuracy'], ok: (v) => v >= 0.9, target: '>= 0.9' },
  { title: 'ECE', keys: ['ece'], ok: (v) => v <= 0.05, target: '<= 0.05' },
  { title: 'structure baseline ROC-AUC', keys: ['structure_baseline_roc_auc'], ok: (v) => v <= STRUCTURE_TARGET_MAX_AUC, target: `<= ${STRUCTURE_TARGET_MAX_AUC}` },
];

function cell(report: EvalReportLike, c: Column): string {
  return c.keys
    .map((k) => {
      const v = report.metrics[k];
      if (typeof v !== 'number' || !Number.isFinite(v)) return 'n/a';
      const text = String(Math.round(v * 1000) / 1000);
      return c.ok !== undefined && !c.ok(v, k) ? `${text} ✗` : text;
    })
    .join(' / ');
}

export function ablationMarkdown(rows: ReadonlyArray<{ label: string; report: EvalReportLike }>): string {
  const head = `| run | ${COLUMNS.map((c) => c.title).join(' | ')} |`;
  const sep = `|---|${COLUMNS.map(() => '---').join('|')}|`;
  const targets = `| *target* | ${COLUMNS.map((c) => c.target ?? '').join(' | ')} |`;
  // Rows are labelled by what they leave out, not by the manifest's version: every row of one
  // ablation carries the version its recipe defaults to, which would tell them apart by nothing.
  const body = rows.map(({ label, report }) => `| ${label} | ${COLUMNS.map((c) => cell(report, c)).join(' | ')} |`);
  return `# Ablation

One row per evaluation run (\`scripts/eval/run.ts\`, on the test split each was given; \`ablation.sh\`
gives every row the shipped model's). ✗ marks a
figure that misses its target; n/a a figure the run did not measure (e.g. no record tagged
register-shift). Flat figures: every test record flattened with \`recut.flatten\`. Re-cut invariance:
the smallest, over the re-cuts split4 / merge_runs / flat, share of conversations whose score moves by
< 0.15. Attribution leaves flat records out.

${head}
${sep}
${targets}
${body.join('\n')}
`;
}

/** Parses `label=path` (split at the last '=' so labels may hold commas and spaces). */
export function parseRow(arg: string): { label: string; path: string } {
  const at = arg.lastIndexOf('=');
  if (at <= 0 || at === arg.length - 1) throw new Error(`--row wants "label=path/to/eval.json", got ${JSON.stringify(arg)}`);
  return { label: arg.slice(0, at).trim(), path: arg.slice(at + 1).trim() };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      row: { type: 'string', multiple: true, default: [] },
      out: { type: 'string', default: resolve(new URL('../..', import.meta.url).pathname, 'reports/ablation.md') },
    },
  });
  if (values.row.length === 0) throw new Error('usage: ablation.ts --row "label=path/eval.json" [--row ...] [--out reports/ablation.md]');
  const rows = values.row.map(parseRow).map(({ label, path }) => ({ label, report: JSON.parse(readFileSync(path, 'utf8')) as EvalReportLike }));
  const out = resolve(values.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, ablationMarkdown(rows));
  console.error(`ablation: ${rows.length} rows -> ${out}`);
}
