// Classification and calibration metrics for the evaluation report. Pure functions over scores.

export function rocAuc(labels: readonly number[], scores: readonly number[]): number {
  const idx = scores.map((_, i) => i).sort((a, b) => (scores[a] as number) - (scores[b] as number));
  // Average ranks for ties, then the Mann-Whitney statistic.
  const ranks = new Array<number>(scores.length);
  for (let i = 0; i < idx.length; ) {
    let j = i;
    while (j + 1 < idx.length && scores[idx[j + 1] as number] === scores[idx[i] as number]) j++;
    for (let k = i; k <= j; k++) ranks[idx[k] as number] = (i + j) / 2 + 1;
    i = j + 1;
  }
  let pos = 0;
  let rankSum = 0;
  labels.forEach((y, i) => {
    if (y === 1) {
      pos++;
      rankSum += ranks[i] as number;
    }
  });
  const neg = labels.length - pos;
  if (pos === 0 || neg === 0) return Number.NaN;
  return (rankSum - (pos * (pos + 1)) / 2) / (pos * neg);
}

/**
 * Average precision (area under the precision-recall curve, step interpolation), as scikit-learn's
 * average_precision_score: tied scores form one threshold, so the result does not depend on the order
 * the records came in.
 */
export function prAuc(labels: readonly number[], scores: readonly number[]): number {
  const idx = scores.map((_, i) => i).sort((a, b) => (scores[b] as number) - (scores[a] as number));
  const pos = labels.filter((y) => y === 1).length;
  if (pos === 0) return Number.NaN;
  let tp = 0;
  let seen = 0;
  let ap = 0;
  for (let k = 0; k < idx.length; ) {
    const s = scores[idx[k] as number];
    let groupTp = 0;
    while (k < idx.length && scores[idx[k] as number] === s) {
      if (labels[idx[k] as number] === 1) groupTp++;
      seen++;
      k++;
    }
    tp += groupTp;
    if (groupTp > 0) ap += (groupTp / pos) * (tp / seen);
  }
  return ap;
}

export interface ThresholdMetrics {
  threshold: number;
  precision: number;
  recall: number;
  f1: number;
  f05: number;
  fpr: number;
  tp: number;
  fp: number;
  tn: number;
  fn: number;
}

/**
 * The lowest cut that flags (score > cut) no more than `fpr` of the negatives: one of their scores.
 * Comparing models at the same false-positive rate rather than at 0.5 separates how well they rank
 * from where their calibration puts 0.5. NaN with no negatives.
 */
export function cutAtFpr(labels: readonly number[], scores: readonly number[], fpr: number): number {
  const negatives = scores.filter((_, i) => labels[i] !== 1).sort((a, b) => b - a);
  if (negatives.length === 0) return Number.NaN;
  return negatives[Math.min(Math.floor(negatives.length * fpr), negatives.length - 1)] as number;
}

export function atThreshold(labels: readonly number[], scores: readonly number[], threshold = 0.5): ThresholdMetrics {
  let tp = 0;
  let fp = 0;
  let tn = 0;
  let fn = 0;
  labels.forEach((y, i) => {
    const hit = (scores[i] as number) > threshold;
    if (y === 1) hit ? tp++ : fn++;
    else hit ? fp++ : tn++;
  });
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  const fbeta = (b: number): number => (precision + recall === 0 ? 0 : ((1 + b * b) * precision * recall) / (b * b * precision + recall));
  return { threshold, precision, recall, f1: fbeta(1), f05: fbeta(0.5), fpr: fp + tn === 0 ? 0 : fp / (fp + tn), tp, fp, tn, fn };
}

export interface ReliabilityBin {
  lo: number;
  hi: number;
  count: number;
  meanScore: number;
  fractionHarmful: number;
}

/** Expected calibration error over equal-width bins, with the bins for the reliability diagram. */
export function calibrationError(labels: readonly number[], scores: readonly number[], bins = 10): { ece: number; bins: ReliabilityBin[] } {
  const out: ReliabilityBin[] = Array.from({ length: bins }, (_, b) => ({ lo: b / bins, hi: (b + 1) / bins, count: 0, meanScore: 0, fractionHarmful: 0 }));
  scores.forEach((s, i) => {
    const bin = out[Math.min(bins - 1, Math.floor(s * bins))] as ReliabilityBin;
    bin.count++;
    bin.meanScore += s;
    bin.fractionHarmful += labels[i] as number;
  });
  let ece = 0;
  for (const bin of out) {
    if (bin.count === 0) continue;
    bin.meanScore /= bin.count;
    bin.fractionHarmful /= bin.count;
    ece += (bin.count / scores.length) * Math.abs(bin.meanScore - bin.fractionHarmful);
  }
  return { ece, bins: out };
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** A figure's lower and upper bound. */
export type Interval = [number, number];

/**
 * The Wilson score interval for a share of `successes` in `n` (95 % at z 1.96). The proxies' slices
 * hold 65 to 2,000 chats, so a share such as 3 of 65 SMS chats flagged is 1.6 % to 12.7 %; unlike the
 * normal approximation, the interval stays inside [0, 1] and is not empty at 0 or n. NaN with n 0.
 */
export function wilsonInterval(successes: number, n: number, z = 1.96): Interval {
  if (n <= 0) return [Number.NaN, Number.NaN];
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/**
 * A ROC-AUC's interval from Hanley and McNeil's standard error (Radiology 143, 1982), which needs only
 * the figure and the two class sizes; clipped to [0, 1]. It counts the chats' sampling, not a seed's
 * spread. NaN with one class.
 */
export function rocAucInterval(auc: number, positives: number, negatives: number, z = 1.96): Interval {
  if (positives <= 0 || negatives <= 0 || Number.isNaN(auc)) return [Number.NaN, Number.NaN];
  const q1 = auc / (2 - auc);
  const q2 = (2 * auc * auc) / (1 + auc);
  const variance = (auc * (1 - auc) + (positives - 1) * (q1 - auc * auc) + (negatives - 1) * (q2 - auc * auc)) / (positives * negatives);
  const se = Math.sqrt(Math.max(0, variance));
  return [Math.max(0, auc - z * se), Math.min(1, auc + z * se)];
}
