// From model outputs to a prediction: calibration, aggregation over segments, bands, confidence.
// Pure functions; docs/model-contract.md ("From outputs to a prediction") is the specification.
import type { Attribution, ModelManifest, RiskLevel, UserProbabilities } from './types.ts';

export const PREVIEW_CODE_POINTS = 500;
const LN3 = Math.log(3);

export function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/** p = sigmoid(logit / temperature + bias). */
export function calibrate(logit: number, calibration: ModelManifest['calibration']): number {
  return sigmoid(logit / calibration.temperature + calibration.bias);
}

/** Softmax over three logits, written out to avoid allocations in the hot path. */
export function softmax3(a: number, b: number, c: number): [number, number, number] {
  const m = Math.max(a, b, c);
  const ea = Math.exp(a - m);
  const eb = Math.exp(b - m);
  const ec = Math.exp(c - m);
  const s = ea + eb + ec;
  return [ea / s, eb / s, ec / s];
}

export interface SegmentOutput {
  /** Calibrated harm probability of the segment. */
  p: number;
  /** Softmax over user1, user2, neither. */
  s: readonly [number, number, number];
  /** When asked for: the calibrated harm had the segment ended after each of its pieces (the last is p). */
  turns?: Float64Array;
}

export interface Aggregate {
  harmfulScore: number;
  userProbabilities: UserProbabilities;
}

/**
 * harmful_score is the maximum calibrated harm over segments. Which side is predatory comes from the
 * speaker outputs, weighted by each segment's harm (w = p + 1e-6) and restricted to user1 and user2;
 * 'neither' is 1 - harmful_score. So the attribution agrees with the calibrated score: the model's own
 * 'neither' class tracks its uncalibrated harm, and used directly it named nobody in about 3 % of
 * the harmful test chats that the calibrated score flagged, leaving them with no party to route.
 */
export function aggregateSegments(segments: readonly SegmentOutput[], speakersKnown = true): Aggregate {
  if (segments.length === 0) throw new RangeError('a conversation has at least one segment');
  let harm = 0;
  let u1 = 0;
  let u2 = 0;
  for (const { p, s } of segments) {
    if (p > harm) harm = p;
    const w = p + 1e-6;
    u1 += w * s[0];
    u2 += w * s[1];
  }
  const side = u1 + u2;
  // Flat text says nothing about who wrote what: the harm is split evenly and nobody is named.
  const share1 = speakersKnown && side > 0 ? u1 / side : 0.5;
  return {
    harmfulScore: harm,
    userProbabilities: { user1: harm * share1, user2: harm * (1 - share1), neither: 1 - harm },
  };
}

/** Half-open bands: [0,0.2) Safe, [0.2,0.4) Low, [0.4,0.6) Medium, [0.6,0.8) High, [0.8,1] Critical. */
export function riskLevel(score: number): RiskLevel {
  if (score < 0.2) return 'Safe';
  if (score < 0.4) return 'Low Risk';
  if (score < 0.6) return 'Medium Risk';
  if (score < 0.8) return 'High Risk';
  return 'Critical';
}

export function isHarmful(score: number): boolean {
  return score > 0.5;
}

/**
 * The largest of the three; ties go to neither, then user1. Flat text (speakers unknown) names nobody:
 * picking a side there would be a guess dressed as an answer.
 */
export function predatoryUser(p: UserProbabilities, speakersKnown = true): Attribution {
  if (!speakersKnown) return 'neither';
  if (p.neither >= p.user1 && p.neither >= p.user2) return 'neither';
  return p.user1 >= p.user2 ? 'user1' : 'user2';
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}

/**
 * confidence = sqrt(margin * certainty): margin = |2p - 1| (distance of the score from 0.5, scaled to
 * [0,1]); certainty = 1 - H(user_probabilities) / ln 3 (1 when one party takes all the probability,
 * 0 when the three are equal). The geometric mean is high only when both are high.
 */
export function confidence(score: number, p: UserProbabilities): number {
  const margin = clamp01(Math.abs(2 * score - 1));
  let h = 0;
  for (const q of [p.user1, p.user2, p.neither]) if (q > 0) h -= q * Math.log(q);
  const certainty = clamp01(1 - h / LN3);
  return clamp01(Math.sqrt(margin * certainty));
}

/** The first 500 code points; a surrogate pair is never split. Stops early on long texts. */
export function preview(text: string, limit = PREVIEW_CODE_POINTS): string {
  // Fast path: 500 UTF-16 units can hold at most 500 code points.
  if (text.length <= limit) return text;
  let i = 0;
  let count = 0;
  const n = text.length;
  while (i < n && count < limit) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      i += d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
    } else {
      i += 1;
    }
    count++;
  }
  return text.slice(0, i);
}
