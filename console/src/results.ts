// A job's results as the file view shows and exports them: rows, band counts, sorting, filtering,
// CSV and JSONL. Pure (no DOM): test/console/ runs it in Node. Exports hold ids, numbers and the
// API's fixed labels (band, side) only, never conversation text.
import type { RiskLevel, Scores } from './types.ts';

/** Bands from the most to the least severe, with their lower bounds (half-open, README "Risk bands"). */
export const BANDS: ReadonlyArray<{ level: RiskLevel; from: number }> = [
  { level: 'Critical', from: 0.8 },
  { level: 'High Risk', from: 0.6 },
  { level: 'Medium Risk', from: 0.4 },
  { level: 'Low Risk', from: 0.2 },
  { level: 'Safe', from: 0 },
];

/** `first_alert_index` and the alert line: a running score above this is an alert. */
export const ALERT_THRESHOLD = 0.5;

export interface Row {
  id: string;
  /** The file line the chat came from (1-based). */
  line: number;
  scores: Scores;
}

export type SortKey = 'score' | 'id' | 'confidence' | 'line';
export type SortDirection = 'ascending' | 'descending';
export type BandFilter = RiskLevel | 'all';

export function sortRows(rows: readonly Row[], key: SortKey, direction: SortDirection): Row[] {
  const sign = direction === 'ascending' ? 1 : -1;
  const value = (r: Row): number | string =>
    key === 'score' ? r.scores.harmfulness_score : key === 'confidence' ? r.scores.confidence : key === 'line' ? r.line : r.id;
  return [...rows].sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    const c = typeof va === 'number' && typeof vb === 'number' ? va - vb : String(va).localeCompare(String(vb));
    // Ties keep the file's order whatever the direction.
    return c !== 0 ? sign * c : a.line - b.line;
  });
}

export function filterRows(rows: readonly Row[], band: BandFilter): Row[] {
  return band === 'all' ? [...rows] : rows.filter((r) => r.scores.risk_level === band);
}

export function bandCounts(rows: readonly Row[]): Map<RiskLevel, number> {
  const counts = new Map<RiskLevel, number>(BANDS.map((b) => [b.level, 0]));
  for (const r of rows) counts.set(r.scores.risk_level, (counts.get(r.scores.risk_level) ?? 0) + 1);
  return counts;
}

export const EXPORT_COLUMNS = [
  'id',
  'line',
  'harmfulness_score',
  'is_harmful',
  'risk_level',
  'predatory_user',
  'user1',
  'user2',
  'neither',
  'confidence',
  'num_segments',
  'used_age_features',
  'first_alert_index',
] as const;

type ExportRecord = Record<(typeof EXPORT_COLUMNS)[number], string | number | boolean | null>;

/** One exported record: ids, numbers and fixed labels, in EXPORT_COLUMNS order. */
function record(r: Row): ExportRecord {
  const s = r.scores;
  return {
    id: r.id,
    line: r.line,
    harmfulness_score: s.harmfulness_score,
    is_harmful: s.is_harmful,
    risk_level: s.risk_level,
    predatory_user: s.predatory_user,
    user1: s.user_probabilities.user1,
    user2: s.user_probabilities.user2,
    neither: s.user_probabilities.neither,
    confidence: s.confidence,
    num_segments: s.num_segments,
    used_age_features: s.used_age_features,
    first_alert_index: s.explanation?.first_alert_index ?? null,
  };
}

/**
 * A CSV cell: every string quoted, so a spreadsheet that splits on `;` or a tab (Excel in many locales)
 * cannot cut a caller-chosen id into a cell of its own; an id that starts like a formula (`=`, `+`,
 * `-`, `@`, tab, carriage return) is also prefixed with `'` so that opening the export never runs it.
 */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${safe.replaceAll('"', '""')}"`;
}

export function toCsv(rows: readonly Row[]): string {
  const lines = [EXPORT_COLUMNS.join(',')];
  for (const r of rows) {
    const rec = record(r);
    lines.push(EXPORT_COLUMNS.map((c) => csvCell(rec[c])).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

export function toJsonl(rows: readonly Row[]): string {
  return rows.map((r) => `${JSON.stringify(record(r))}\n`).join('');
}
