// Structure-only baseline: a logistic regression that sees how a chat is cut into turns and lines and
// which character classes it uses, never its words. If it separates harmful from benign test chats,
// the corpus leaks the label through structure (turn counts, prefixes, casing, emoji...) and a model
// can score well by reading the layout instead of the content (issue "The model reads real chats":
// one `user1: hi` scored Critical; flat exports were never flagged). Target: test ROC-AUC <= 0.65.

import { parseTurns } from '../../src/scoring/conversation.ts';
import { check, fmt, round, type GuardCheck } from './guard.ts';
import { rocAuc } from './metrics.ts';

export interface StructureExample {
  conversation: string;
  label: number;
}

export const STRUCTURE_FEATURES: readonly string[] = [
  'log_turns',
  'log_lines',
  'turn_words_mean',
  'turn_words_std',
  'turn_chars_mean',
  'turn_chars_std',
  'share_user1_turns',
  'alternation_rate',
  'share_lines_with_prefix',
  'punctuation_per_char',
  'uppercase_share',
  'digit_share',
  'non_ascii_share',
  'question_marks_per_turn',
];

export const STRUCTURE_TARGET_MAX_AUC = 0.65;

function meanStd(xs: readonly number[]): [number, number] {
  if (xs.length === 0) return [0, 0];
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  const v = xs.reduce((a, b) => a + (b - m) ** 2, 0) / xs.length;
  return [m, Math.sqrt(v)];
}

function count(text: string, re: RegExp): number {
  return text.match(re)?.length ?? 0;
}

/**
 * True when the server reads `line` as starting a turn with a speaker prefix. Asked of parseTurns
 * itself (no copy of its prefix rule): a prefixed line yields a turn of a named side whose text is
 * shorter than the line; an unprefixed one yields the whole line as a turn of the 'unknown' speaker.
 */
export function lineHasSpeakerPrefix(line: string): boolean {
  const t = parseTurns(line)[0];
  return t !== undefined && t.speaker !== 'unknown' && t.text.length < line.trim().length;
}

/** The features of STRUCTURE_FEATURES, in that order. No word identity enters. */
export function structureFeatures(conversation: string): number[] {
  const turns = parseTurns(conversation);
  const lines = conversation.split(/\r\n|\r|\n/).filter((l) => l.trim() !== '');
  const words = turns.map((t) => t.text.split(/\s+/).filter((w) => w !== '').length);
  const chars = turns.map((t) => t.text.length);
  const [wm, ws] = meanStd(words);
  const [cm, cs] = meanStd(chars);
  const n = Math.max(1, turns.length);
  let changes = 0;
  for (let i = 1; i < turns.length; i++) if (turns[i]?.speaker !== turns[i - 1]?.speaker) changes++;
  const text = turns.map((t) => t.text).join(' ');
  const len = Math.max(1, text.length);
  return [
    Math.log1p(turns.length),
    Math.log1p(lines.length),
    wm,
    ws,
    cm,
    cs,
    turns.filter((t) => t.speaker === 'user1').length / n,
    turns.length > 1 ? changes / (turns.length - 1) : 0,
    lines.length === 0 ? 0 : lines.filter(lineHasSpeakerPrefix).length / lines.length,
    count(text, /\p{P}/gu) / len,
    count(text, /\p{Lu}/gu) / len,
    count(text, /\p{N}/gu) / len,
    count(text, /[^\x00-\x7f]/gu) / len,
    count(text, /\?/g) / n,
  ];
}

/** Solves A x = b (A symmetric positive definite, small) by Gaussian elimination with partial pivoting. */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i] as number]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r;
    [m[c], m[p]] = [m[p]!, m[c]!];
    const piv = m[c]![c]!;
    for (let r = c + 1; r < n; r++) {
      const f = m[r]![c]! / piv;
      if (f === 0) continue;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = m[r]![n]!;
    for (let k = r + 1; k < n; k++) s -= m[r]![k]! * x[k]!;
    x[r] = s / m[r]![r]!;
  }
  return x;
}

export interface LogisticModel {
  means: number[];
  stds: number[];
  /** Intercept first, then one weight per standardized feature. */
  weights: number[];
}

const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

/**
 * L2-regularized logistic regression fitted by Newton's method (deterministic; the intercept is not
 * penalized). Features are standardized with the training set's means and standard deviations.
 */
export function fitLogistic(x: readonly number[][], y: readonly number[], l2 = 1, iterations = 30): LogisticModel {
  const d = x[0]?.length ?? 0;
  const means = new Array<number>(d).fill(0);
  const stds = new Array<number>(d).fill(0);
  for (let j = 0; j < d; j++) {
    const [m, s] = meanStd(x.map((r) => r[j] as number));
    means[j] = m;
    // A constant feature carries nothing; dividing by 1 keeps it at 0 instead of NaN.
    stds[j] = s > 1e-12 ? s : 1;
  }
  const z = x.map((r) => [1, ...r.map((v, j) => (v - means[j]!) / stds[j]!)]);
  const w = new Array<number>(d + 1).fill(0);
  for (let it = 0; it < iterations; it++) {
    const grad = w.map((wj, j) => (j === 0 ? 0 : l2 * wj));
    const hess = Array.from({ length: d + 1 }, (_, i) => Array.from({ length: d + 1 }, (_, j) => (i === j && i > 0 ? l2 : 0)));
    z.forEach((row, i) => {
      const p = sigmoid(row.reduce((s, v, j) => s + v * w[j]!, 0));
      const r = p - (y[i] as number);
      const h = p * (1 - p);
      for (let a = 0; a <= d; a++) {
        grad[a]! += r * row[a]!;
        const ha = h * row[a]!;
        for (let b = a; b <= d; b++) hess[a]![b]! += ha * row[b]!;
      }
    });
    for (let a = 0; a <= d; a++) for (let b = 0; b < a; b++) hess[a]![b] = hess[b]![a]!;
    const step = solve(hess, grad);
    let change = 0;
    for (let j = 0; j <= d; j++) {
      w[j]! -= step[j]!;
      change = Math.max(change, Math.abs(step[j]!));
    }
    if (change < 1e-9) break;
  }
  return { means, stds, weights: w };
}

export function predictLogistic(model: LogisticModel, x: readonly number[]): number {
  let s = model.weights[0] as number;
  x.forEach((v, j) => (s += (model.weights[j + 1] as number) * ((v - (model.means[j] as number)) / (model.stds[j] as number))));
  return sigmoid(s);
}

export interface StructureBaselineResult {
  roc_auc: number;
  features: string[];
  /** Standardized weights by feature: which structural cue the baseline leans on. */
  weights: Record<string, number>;
  train: number;
  test: number;
}

/** Fits the structure-only baseline on `train` and reports its ROC-AUC on `test` (harmful vs benign). */
export function structureBaselineAuc(train: readonly StructureExample[], test: readonly StructureExample[]): StructureBaselineResult {
  const model = fitLogistic(
    train.map((r) => structureFeatures(r.conversation)),
    train.map((r) => r.label),
  );
  const scores = test.map((r) => predictLogistic(model, structureFeatures(r.conversation)));
  return {
    roc_auc: rocAuc(test.map((r) => r.label), scores),
    features: [...STRUCTURE_FEATURES],
    weights: Object.fromEntries(STRUCTURE_FEATURES.map((f, j) => [f, Math.round((model.weights[j + 1] as number) * 1000) / 1000])),
    train: train.length,
    test: test.length,
  };
}

export interface StructureGuardReport {
  structure_baseline: StructureBaselineResult;
  structure_baseline_generated_only: StructureBaselineResult;
}

/**
 * The guard: the baseline on all chats, and on generated chats only. Real benign chats differ from
 * synthetic ones in layout anyway, so the second says how much of the leak is the generator's own.
 */
export function structureGuard(train: readonly (StructureExample & { source: string })[], test: readonly (StructureExample & { source: string })[]): StructureGuardReport {
  const generated = (r: { source: string }): boolean => r.source === 'generator';
  return {
    structure_baseline: structureBaselineAuc(train, test),
    structure_baseline_generated_only: structureBaselineAuc(train.filter(generated), test.filter(generated)),
  };
}

/** The guard's check: the baseline must not separate the classes better than STRUCTURE_TARGET_MAX_AUC. */
export function structureChecks(s: StructureGuardReport): GuardCheck[] {
  return [check('structure-only baseline', 'test ROC-AUC', s.structure_baseline.roc_auc, `<= ${STRUCTURE_TARGET_MAX_AUC}`, (v) => v <= STRUCTURE_TARGET_MAX_AUC)];
}

/** The guard's figures for report.metrics. */
export function structureFigures(s: StructureGuardReport): Record<string, number> {
  return {
    structure_baseline_roc_auc: round(s.structure_baseline.roc_auc),
    structure_baseline_roc_auc_generated_only: round(s.structure_baseline_generated_only.roc_auc),
  };
}

/** The guard's section of the report. */
export function structureMarkdown(s: StructureGuardReport): string {
  const all = s.structure_baseline;
  const generated = s.structure_baseline_generated_only;
  return `### Structure-only baseline
L2 logistic regression (Newton, standardized on train) on ${all.features.length} features read only through
\`parseTurns\` and character classes, no words; trained on ${all.train} train conversations,
tested on ${all.test}. Test ROC-AUC **${fmt(all.roc_auc)}** (target <= ${STRUCTURE_TARGET_MAX_AUC};
above it the generator leaks the label through structure). On generated chats only (no real chats in
train or test): **${fmt(generated.roc_auc)}** (${generated.test} test conversations). Standardized weights (all chats):
${Object.entries(all.weights).map(([k, v]) => `\`${k}\` ${v}`).join(', ')}.`;
}
