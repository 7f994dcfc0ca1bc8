// Speaker ages: the accepted forms and the 8 age features of docs/model-contract.md (step 5).
import type { CodedError } from '../error-catalogue.ts';

export interface AgeRange {
  lo: number;
  hi: number;
  /** Fraction of the whole years in [lo, hi] that are under 18. */
  pMinor: number;
}

export const MAX_AGE = 120;
export const AGE_FEATURES_SIZE = 8;
const MINOR: readonly [number, number] = [8, 17];
const ADULT: readonly [number, number] = [18, 80];

function range(lo: number, hi: number): AgeRange {
  const minorYears = Math.max(0, Math.min(hi, 17) - lo + 1);
  return { lo, hi, pMinor: minorYears / (hi - lo + 1) };
}

function toAge(digits: string): number | undefined {
  // Leading zeros do not change an integer (`013` and `0013` are 13); the bounded length of the rest
  // keeps absurd inputs like 10^400 from reaching Number().
  const significant = digits.replace(/^0+(?=\d)/, '');
  if (significant.length > 3) return undefined;
  const n = Number(significant);
  return n <= MAX_AGE ? n : undefined;
}

/** Parses `42`, `13-15`, `minor` or `adult` (case-insensitive, surrounding spaces ignored). */
export function parseAge(value: string): AgeRange | undefined {
  const v = value.trim().toLowerCase();
  if (v === 'minor') return range(MINOR[0], MINOR[1]);
  if (v === 'adult') return range(ADULT[0], ADULT[1]);
  const exact = /^\d+$/.exec(v);
  if (exact !== null) {
    const a = toAge(v);
    return a === undefined ? undefined : range(a, a);
  }
  const span = /^(\d+)\s*-\s*(\d+)$/.exec(v);
  if (span !== null) {
    const lo = toAge(span[1] as string);
    const hi = toAge(span[2] as string);
    if (lo === undefined || hi === undefined || lo > hi) return undefined;
    return range(lo, hi);
  }
  return undefined;
}

/** The error of an invalid age (`invalid_age`), or undefined when the value is valid. */
export function ageError(field: 'age_a' | 'age_b', value: string, where = ''): CodedError | undefined {
  if (parseAge(value) !== undefined) return undefined;
  return { code: 'invalid_age', params: { where, field, maxAge: MAX_AGE } };
}

function agePart(value: string | undefined, out: number[], offset: number): boolean {
  if (value === undefined) return false;
  const age = parseAge(value);
  // Ages reach the engine already validated; an invalid one here is a caller bug, not an absent age.
  if (age === undefined) throw new TypeError('invalid age reached the scoring engine');
  out[offset] = 1;
  out[offset + 1] = age.pMinor;
  out[offset + 2] = age.lo / 100;
  out[offset + 3] = age.hi / 100;
  return true;
}

/** 4 features for user1 (age_a) then 4 for user2 (age_b); an absent age is all zeros. */
export function ageFeatures(age_a?: string, age_b?: string): number[] {
  const out = new Array<number>(AGE_FEATURES_SIZE).fill(0);
  agePart(age_a, out, 0);
  agePart(age_b, out, 4);
  return out;
}

/** True when at least one age was supplied, so the model saw age information. */
export function usedAgeFeatures(age_a?: string, age_b?: string): boolean {
  return age_a !== undefined || age_b !== undefined;
}
