// minLength and maxLength in Unicode code points, as the spec's "characters" (an emoji is one), without
// walking every string. Ajv's own keywords count the code points of each string from its first code
// unit: 400 ms of blocked event loop for a batch of 100 conversations of 315,000 characters. A string
// has at least length/2 and at most length code points, so most strings are decided by `.length`, and
// the rest are counted only as far as the limit needs.
import type { Ajv, ErrorObject } from 'ajv';

/** Ajv's function-style keyword: it reads `errors` off the function after a failure. */
type LengthKeyword = ((limit: number, data: string) => boolean) & { errors?: ErrorObject[] };

/** Code points in `s`, counting stops once past `stopAfter`. */
export function codePointsUpTo(s: string, stopAfter: number): number {
  let points = 0;
  for (let i = 0; i < s.length && points <= stopAfter; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one code point; a lone half counts as one, as Ajv's does.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    points++;
  }
  return points;
}

/** Whether `s` has at most `max` code points. */
export function atMostCodePoints(s: string, max: number): boolean {
  if (s.length <= max) return true;
  if (Math.ceil(s.length / 2) > max) return false;
  return codePointsUpTo(s, max) <= max;
}

/** Whether `s` has at least `min` code points. */
export function atLeastCodePoints(s: string, min: number): boolean {
  if (s.length < min) return false;
  if (Math.ceil(s.length / 2) >= min) return true;
  return codePointsUpTo(s, min) >= min;
}

function keyword(name: 'maxLength' | 'minLength', holds: (s: string, limit: number) => boolean, comparison: string) {
  const validate: LengthKeyword = (limit: number, data: string): boolean => {
    if (holds(data, limit)) return true;
    // Ajv's own error shape, so error mapping (http/errors.ts validationDetail) reads it unchanged.
    const error: Partial<ErrorObject> = { keyword: name, params: { limit }, message: `must NOT have ${comparison} than ${limit} characters` };
    validate.errors = [error as ErrorObject];
    return false;
  };
  return { keyword: name, type: 'string' as const, schemaType: 'number' as const, errors: true, validate };
}

/** An Ajv plugin: replaces minLength and maxLength with the versions above (same meaning, same errors). */
export function codePointLengths(ajv: Ajv): Ajv {
  ajv.removeKeyword('maxLength');
  ajv.removeKeyword('minLength');
  ajv.addKeyword(keyword('maxLength', atMostCodePoints, 'more'));
  ajv.addKeyword(keyword('minLength', atLeastCodePoints, 'fewer'));
  return ajv;
}
