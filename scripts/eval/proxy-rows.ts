// One row of a proxy slice (a set of chats scored by the eval that stands in for the real-chat
// evaluation): its ROC-AUC, recall and share of benign chats flagged at 0.5, each with its 95 %
// interval, rendered as a report table and named as manifest metrics. Shared by the generated proxies
// (contact-proxies.ts) and the excerpts written by hand (written-excerpts.ts), with the targets both
// stand in for.

import { atThreshold, rocAuc, rocAucInterval, wilsonInterval, type Interval } from './metrics.ts';

/** The real-chat evaluation's targets (issue 32), which every proxy slice stands in for. */
export const CONTACT_TARGETS = {
  roc_auc_min: 0.85,
  short_excerpt_roc_auc_min: 0.75,
  recall_min: 0.6,
  fpr_max: 0.1,
  no_sexual_word_flagged_max: 0.05,
  real_benign_flagged_max: 0.02,
} as const;

export interface ProxyRow {
  slice: string;
  chats: number;
  harmful: number;
  /** null where the slice holds one class only. */
  roc_auc: number | null;
  recall_at_0_5: number | null;
  /** Share of the slice's benign chats scored above 0.5. */
  benign_flagged: number | null;
  /**
   * 95 % intervals of the three figures over the slice's chats (ROC-AUC: Hanley and McNeil; the shares:
   * Wilson), null where the figure is. A slice of 65 SMS chats cannot tell 2 % from 5 %: the report
   * shows how far each figure could move by the draw of the chats alone.
   */
  roc_auc_interval: Interval | null;
  recall_interval: Interval | null;
  benign_flagged_interval: Interval | null;
  target: string;
}

/** One proxy row: the slice's ROC-AUC, recall and benign share flagged at 0.5, each with its 95 % interval. */
export function proxyRow(slice: string, records: ReadonlyArray<{ label: 0 | 1 }>, scores: readonly number[], target: string): ProxyRow {
  const labels = records.map((r) => r.label);
  const harmful = labels.filter((y) => y === 1).length;
  const benign = records.length - harmful;
  const at = atThreshold(labels, scores);
  const auc = harmful > 0 && benign > 0 ? rocAuc(labels, scores) : null;
  return {
    slice,
    chats: records.length,
    harmful,
    roc_auc: auc,
    recall_at_0_5: harmful > 0 ? at.recall : null,
    benign_flagged: benign > 0 ? at.fpr : null,
    roc_auc_interval: auc === null ? null : rocAucInterval(auc, harmful, benign),
    recall_interval: harmful > 0 ? wilsonInterval(at.tp, harmful) : null,
    benign_flagged_interval: benign > 0 ? wilsonInterval(at.fp, benign) : null,
    target,
  };
}

const fmt = (v: number | null): string => (v === null ? 'n/a' : String(Math.round(v * 1000) / 1000));
const withInterval = (v: number | null, i: Interval | null): string => (v === null || i === null ? fmt(v) : `${fmt(v)} [${fmt(i[0])}, ${fmt(i[1])}]`);

/** The rows as a markdown table, each figure with its interval. */
export function proxyTable(rows: readonly ProxyRow[]): string {
  return `| slice | chats | harmful | ROC-AUC | recall at 0.5 | benign flagged at 0.5 | target |
|---|---|---|---|---|---|---|
${rows.map((r) => `| ${r.slice} | ${r.chats} | ${r.harmful} | ${withInterval(r.roc_auc, r.roc_auc_interval)} | ${withInterval(r.recall_at_0_5, r.recall_interval)} | ${withInterval(r.benign_flagged, r.benign_flagged_interval)} | ${r.target} |`).join('\n')}`;
}

/** Metric names for the manifest: `<prefix>_<slice>_<figure>`, the slice's words in snake case, brackets dropped. */
export function proxyMetrics(prefix: string, rows: readonly ProxyRow[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) {
    const key = `${prefix}_${r.slice.replace(/\(.*?\)/g, '').trim().replace(/[^a-z0-9]+/gi, '_').replace(/_+$/, '').toLowerCase()}`;
    for (const [figure, v] of [['roc_auc', r.roc_auc], ['recall_at_0_5', r.recall_at_0_5], ['benign_flagged', r.benign_flagged]] as const) {
      if (v !== null) out[`${key}_${figure}`] = Math.round(v * 10_000) / 10_000;
    }
  }
  return out;
}
