// The early-detection view (eSPD): how many messages the service must read before it raises a
// correct alert. Every test chat is scored once with explain (the running score after every turn, as
// the API answers it); a chat alerts at the first turn whose running score is above 0.5.

import { explainTurns } from '../../src/scoring/explain.ts';
import type { Prediction, ScoreRequest } from '../../src/scoring/types.ts';
import type { LabeledConversation } from '../data/record.ts';
import { turnOfLine } from '../data/export.ts';
import { mean } from './metrics.ts';
import { scoreInBatches, type BatchScorer } from './harness.ts';

/** Shares of a chat's messages read, at which the latency curve is reported. */
export const READ_SHARES = [0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1] as const;
/** The targets on real chats, applied here to their synthetic proxies. */
export const EARLY_TARGETS = { harmful_alert_min: 53 / 56, median_first_alert_share_max: 0.25, benign_no_alert_min: 0.98 } as const;

export interface AlertRow {
  turns: number;
  /** 0-based turn of the first alert, or null. */
  first: number | null;
  /** 0-based turn where the first predatory move begins, where the record knows it (`onset_line`). */
  onset?: number;
}

/** How soon after the first predatory move the alert comes: a latency the generator's placement of that move does not set. */
export interface OnsetLatency {
  /** Harmful chats whose onset is known. */
  conversations: number;
  /** Share alerted before the onset: on a benign prefix, so too early. */
  alerted_before_onset: number;
  /** Share alerted at or after the onset. */
  alerted_after_onset: number;
  /** Median messages from the onset to the alert, over those alerted at or after it (0: at the onset message). */
  median_messages_after_onset: number;
  /** Share alerted within 10 messages of the onset. */
  alerted_within_10: number;
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
  /** The real-chat target's proxy: whole long chats with speaker turns (no excerpt, no flat rendering). */
  harmful_long: CurveGroup;
  /** Every long harmful record, excerpts and flat renderings included (a one-line flat chat alerts at 100 %). */
  harmful_long_any: CurveGroup;
  onset: OnsetLatency;
  onset_long: OnsetLatency;
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
    // A chat counts as detected at `read` once the share of it read at its first alert, (first + 1) /
    // turns (as in the median), is at most `read`. Rounding the messages read up instead would count a
    // one-message chat (a flat export) as caught after reading a tenth of it.
    curve: READ_SHARES.map((read) => ({
      read,
      detected: rows.length === 0 ? Number.NaN : rows.filter((r) => r.first !== null && (r.first + 1) / r.turns <= read + 1e-12).length / rows.length,
    })),
  };
}

export function alertRow(p: Prediction, onsetLine?: number): AlertRow {
  if (p.explanation === undefined) throw new Error('scored without explain');
  const e = explainTurns(p.explanation);
  const row: AlertRow = { turns: Math.max(1, e.turn_scores.length), first: e.first_alert_index };
  const onset = onsetLine === undefined ? undefined : turnOfLine(e.turn_lines, onsetLine);
  if (onset !== undefined) row.onset = onset;
  return row;
}

export function onsetLatency(rows: readonly AlertRow[]): OnsetLatency {
  const known = rows.filter((r) => r.onset !== undefined);
  const after = known.filter((r) => r.first !== null && r.first >= (r.onset as number));
  const lag = after.map((r) => (r.first as number) - (r.onset as number));
  const share = (k: number) => (known.length === 0 ? Number.NaN : k / known.length);
  return {
    conversations: known.length,
    alerted_before_onset: share(known.filter((r) => r.first !== null && r.first < (r.onset as number)).length),
    alerted_after_onset: share(after.length),
    median_messages_after_onset: median(lag),
    alerted_within_10: share(lag.filter((x) => x <= 10).length),
  };
}

export async function earlyDetection(scorer: BatchScorer, test: readonly LabeledConversation[], realSources: ReadonlySet<string>): Promise<EarlyReport> {
  const requests: ScoreRequest[] = test.map((r) => ({ conversation: r.conversation, age_a: r.age_a, age_b: r.age_b, explain: true }));
  const rows = (await scoreInBatches(scorer, requests)).map((p, i) => alertRow(p, test[i]?.onset_line));
  const pick = (keep: (r: LabeledConversation) => boolean) => rows.filter((_, i) => keep(test[i] as LabeledConversation));
  const isLong = (r: LabeledConversation) => r.tags?.includes('long') ?? false;
  // Whole chats with speaker turns, as the real-chat targets are: an excerpt is part of a chat, and one
  // line of flat text is one message, which alerts at 100 % of what it has by construction.
  const whole = (r: LabeledConversation) => !(r.tags?.includes('flat') ?? false) && !(r.tags?.includes('excerpt') ?? false);
  const noAlert = (group: AlertRow[]) => mean(group.map((r) => (r.first === null ? 1 : 0)));
  return {
    harmful: curveOf(pick((r) => r.label === 1)),
    harmful_long: curveOf(pick((r) => r.label === 1 && isLong(r) && whole(r))),
    harmful_long_any: curveOf(pick((r) => r.label === 1 && isLong(r))),
    onset: onsetLatency(pick((r) => r.label === 1)),
    onset_long: onsetLatency(pick((r) => r.label === 1 && isLong(r))),
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
above 0.5. The issue's real-chat targets, applied to their synthetic proxies. The real-chat targets are
on 56 whole predator chats with speaker turns, so their proxy is the long harmful test chats (100 to 600
messages, grooming spread thinly) that are neither excerpts nor flat renderings: a flat rendering is one
line, one message, and alerts at 100 % of what it has by construction.

| check | value | target | |
|---|---|---|---|
| long harmful chats with an alert (whole, with speaker turns) | ${e.harmful_long.alerted} of ${e.harmful_long.conversations} | >= ${pct(t.harmful_alert_min)} | ${verdict(e.harmful_long.alerted / e.harmful_long.conversations >= t.harmful_alert_min)} |
| every long harmful record with an alert (excerpts and flat renderings included); median first alert | ${e.harmful_long_any.alerted} of ${e.harmful_long_any.conversations}; ${pct(e.harmful_long_any.median_first_alert_share)} | | |
| all harmful chats with an alert (excerpts and short chats included) | ${e.harmful.alerted} of ${e.harmful.conversations} (${pct(e.harmful.alerted / e.harmful.conversations)}) | | |
| median first alert, share of messages read (all harmful; long) | ${pct(e.harmful.median_first_alert_share)}; ${pct(e.harmful_long.median_first_alert_share)} | <= ${pct(t.median_first_alert_share_max)} (long) | ${verdict(e.harmful_long.median_first_alert_share <= t.median_first_alert_share_max)} |
| median first alert, message index (all harmful; long) | ${e.harmful.median_first_alert_index}; ${e.harmful_long.median_first_alert_index} | | |
| real benign chats with no alert (the target is on real benign chats) | ${pct(e.real_benign_no_alert)} | >= ${pct(t.benign_no_alert_min)} | ${verdict(e.real_benign_no_alert >= t.benign_no_alert_min)} |
| all benign chats with no alert (synthetic hard negatives included); long ones | ${pct(e.benign_no_alert)}; ${pct(e.benign_long_no_alert)} | | |

Where a harmful test chat's lines survive rendering, its record knows where the first predatory move
begins (\`onset_line\`). How long the alert takes after that move depends on the model alone, not on where
the generator put the move:

| harmful chats with a known onset | all | long |
|---|---|---|
| chats | ${e.onset.conversations} | ${e.onset_long.conversations} |
| alerted before the onset (on a benign prefix) | ${pct(e.onset.alerted_before_onset)} | ${pct(e.onset_long.alerted_before_onset)} |
| alerted at or after the onset | ${pct(e.onset.alerted_after_onset)} | ${pct(e.onset_long.alerted_after_onset)} |
| median messages from the onset to the alert | ${e.onset.median_messages_after_onset} | ${e.onset_long.median_messages_after_onset} |
| alerted within 10 messages of the onset | ${pct(e.onset.alerted_within_10)} | ${pct(e.onset_long.alerted_within_10)} |

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
    early_long_any_harmful_alerted: e.harmful_long_any.alerted / e.harmful_long_any.conversations,
    early_onset_alerted_before: e.onset.alerted_before_onset,
    early_onset_median_messages_after: e.onset.median_messages_after_onset,
    early_onset_alerted_within_10: e.onset.alerted_within_10,
    early_benign_no_alert: e.benign_no_alert,
    early_real_benign_no_alert: e.real_benign_no_alert,
  };
}
