// The early-detection view (eSPD): how many messages the service must read before it raises a
// correct alert. Every test chat is scored once with explain (the running score after every turn, as
// the API answers it); a chat alerts at the first turn whose running score is above 0.5.

import { explainTurns } from '../../src/scoring/explain.ts';
import type { Prediction, ScoreRequest } from '../../src/scoring/types.ts';
import type { LabeledConversation } from '../data/record.ts';
import { mean } from './metrics.ts';
import { scoreInBatches, type BatchScorer } from './recut-invariance.ts';

/** Shares of a chat's messages read, at which the latency curve is reported. */
export const READ_SHARES = [0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1] as const;
/** The targets on real chats, applied here to their synthetic proxies. */
export const EARLY_TARGETS = { harmful_alert_min: 53 / 56, median_first_alert_share_max: 0.25, benign_no_alert_min: 0.98 } as const;

export interface AlertRow {
  turns: number;
  /** 0-based turn of the first alert, or null. */
  first: number | null;
}

export interface CurveGroup {
  conversations: number;
  alerted: number;
  /** Median over alerted chats of (first alert + 1) / turns: the share of messages read at the alert. */
  median_first_alert_share: number;
  median_first_alert_index: number;
  /** Share of the group's chats alerted once `share` of their messages are read. */
  curve: Array<{ read: number; detected: number }>;
}

export interface EarlyReport {
  harmful: CurveGroup;
  harmful_long: CurveGroup;
  benign_no_alert: number;
  benign_long_no_alert: number;
  real_benign_no_alert: number;
}

function median(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** The latency curve of one group of harmful chats. */
export function curveOf(rows: readonly AlertRow[]): CurveGroup {
  const alerted = rows.filter((r) => r.first !== null);
  const shares = alerted.map((r) => ((r.first as number) + 1) / r.turns);
  return {
    conversations: rows.length,
    alerted: alerted.length,
    median_first_alert_share: median(shares),
    median_first_alert_index: median(alerted.map((r) => r.first as number)),
    // A chat counts as detected at `read` once its first alert lies within the first ceil(read * turns) messages.
    curve: READ_SHARES.map((read) => ({
      read,
      detected: rows.length === 0 ? Number.NaN : rows.filter((r) => r.first !== null && r.first + 1 <= Math.ceil(read * r.turns)).length / rows.length,
    })),
  };
}

export function alertRow(p: Prediction): AlertRow {
  if (p.explanation === undefined) throw new Error('scored without explain');
  const e = explainTurns(p.explanation);
  return { turns: Math.max(1, e.turn_scores.length), first: e.first_alert_index };
}

export async function earlyDetection(scorer: BatchScorer, test: readonly LabeledConversation[], realSources: ReadonlySet<string>): Promise<EarlyReport> {
  const requests: ScoreRequest[] = test.map((r) => ({ conversation: r.conversation, age_a: r.age_a, age_b: r.age_b, explain: true }));
  const rows = (await scoreInBatches(scorer, requests)).map(alertRow);
  const pick = (keep: (r: LabeledConversation) => boolean) => rows.filter((_, i) => keep(test[i] as LabeledConversation));
  const isLong = (r: LabeledConversation) => r.tags?.includes('long') ?? false;
  const noAlert = (group: AlertRow[]) => mean(group.map((r) => (r.first === null ? 1 : 0)));
  return {
    harmful: curveOf(pick((r) => r.label === 1)),
    harmful_long: curveOf(pick((r) => r.label === 1 && isLong(r))),
    benign_no_alert: noAlert(pick((r) => r.label === 0)),
    benign_long_no_alert: noAlert(pick((r) => r.label === 0 && isLong(r))),
    real_benign_no_alert: noAlert(pick((r) => r.label === 0 && realSources.has(r.source))),
  };
}

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)} %` : 'n/a');
const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

export function earlyMarkdown(e: EarlyReport): string {
  const t = EARLY_TARGETS;
  const rows = READ_SHARES.map((read, k) => `| ${pct(read)} | ${pct(e.harmful.curve[k]?.detected ?? Number.NaN)} | ${pct(e.harmful_long.curve[k]?.detected ?? Number.NaN)} |`);
  return `## Early detection: the eSPD latency curve
Each test chat scored once with \`explain\`; a chat alerts at the first message whose running score is
above 0.5. The issue's real-chat targets, applied to their synthetic proxies (long chats are 100 to 600
messages with grooming spread thinly):

| check | value | target | |
|---|---|---|---|
| long harmful chats with an alert (the real-chat target is on 56 long predator chats) | ${e.harmful_long.alerted} of ${e.harmful_long.conversations} | >= ${pct(t.harmful_alert_min)} | ${verdict(e.harmful_long.alerted / e.harmful_long.conversations >= t.harmful_alert_min)} |
| all harmful chats with an alert (excerpts and short chats included) | ${e.harmful.alerted} of ${e.harmful.conversations} (${pct(e.harmful.alerted / e.harmful.conversations)}) | | |
| median first alert, share of messages read (all harmful; long) | ${pct(e.harmful.median_first_alert_share)}; ${pct(e.harmful_long.median_first_alert_share)} | <= ${pct(t.median_first_alert_share_max)} (long) | ${verdict(e.harmful_long.median_first_alert_share <= t.median_first_alert_share_max)} |
| median first alert, message index (all harmful; long) | ${e.harmful.median_first_alert_index}; ${e.harmful_long.median_first_alert_index} | | |
| real benign chats with no alert (the target is on real benign chats) | ${pct(e.real_benign_no_alert)} | >= ${pct(t.benign_no_alert_min)} | ${verdict(e.real_benign_no_alert >= t.benign_no_alert_min)} |
| all benign chats with no alert (synthetic hard negatives included); long ones | ${pct(e.benign_no_alert)}; ${pct(e.benign_long_no_alert)} | | |

| messages read | harmful chats detected | long harmful chats detected |
|---|---|---|
${rows.join('\n')}
`;
}

/** The headline figures of the view, for the manifest's metrics. */
export function earlyMetrics(e: EarlyReport): Record<string, number> {
  return {
    early_harmful_alerted: e.harmful.alerted / e.harmful.conversations,
    early_long_harmful_alerted: e.harmful_long.alerted / e.harmful_long.conversations,
    early_median_first_alert_share: e.harmful.median_first_alert_share,
    early_long_median_first_alert_share: e.harmful_long.median_first_alert_share,
    early_benign_no_alert: e.benign_no_alert,
    early_real_benign_no_alert: e.real_benign_no_alert,
  };
}
