// What every shortcut guard shares (guards.ts lists the guards): the row in which a guard states a
// target next to its figure, the rounding and formatting of figures in the report, and the issue's
// targets for flat text, which flat renderings, sparse grooming and long small talk are all held to.

/** Issue targets for flat text: ROC-AUC >= 0.90, >= 60 % of grooming flagged, <= 5 % of others flagged. */
export const FLAT_TARGETS = { roc_auc_min: 0.9, recall_min: 0.6, fpr_max: 0.05 } as const;

export interface GuardCheck {
  guard: string;
  figure: string;
  value: number;
  target: string;
  /** null when the figure could not be measured (e.g. no record carries the tag). */
  pass: boolean | null;
}

/** A figure rounded to `d` decimals for report.metrics (NaN and infinities stay as they are). */
export const round = (x: number, d = 4): number => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);

/** One check: the figure, rounded, and whether it meets its target (null when it could not be measured). */
export function check(guard: string, figure: string, value: number, target: string, ok: (v: number) => boolean): GuardCheck {
  return { guard, figure, value: round(value), target, pass: Number.isFinite(value) ? ok(value) : null };
}

/** A figure as the report's Markdown writes it: `d` decimals at most, n/a when it could not be measured. */
export const fmt = (x: number, d = 3): string => (Number.isFinite(x) ? String(Math.round(x * 10 ** d) / 10 ** d) : 'n/a');

/** A check's result as the report's Markdown writes it. */
export const mark = (p: boolean | null): string => (p === null ? 'n/a' : p ? 'PASS' : 'FAIL');
