// minLength and maxLength count Unicode code points, as Ajv's own keywords do, but decide most strings
// from their length alone: a batch of 100 conversations of 315,000 characters is validated without
// walking them (Ajv's walk blocked the event loop about 400 ms).
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { atLeastCodePoints, atMostCodePoints, codePointLengths } from '../../../src/http/code-point-lengths.ts';

const reference = (s: string) => [...s].length;
const text = fc.string({ unit: fc.oneof(fc.constant('a'), fc.constant('😀'), fc.constant('\ud800'), fc.constant('\udc00'), fc.constant('é')), maxLength: 40 });

describe('code-point lengths', () => {
  it('agree with counting every code point, lone surrogates included, for any limit', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 50 }), (s, limit) => {
        expect(atMostCodePoints(s, limit)).toBe(reference(s) <= limit);
        expect(atLeastCodePoints(s, limit)).toBe(reference(s) >= limit);
      }),
      { numRuns: 2000 },
    );
  });

  it("give Ajv's own verdicts and error shape through the plugin", () => {
    const schema = { type: 'string', minLength: 2, maxLength: 3 };
    const ours = codePointLengths(new Ajv()).compile(schema);
    const ajvs = new Ajv().compile(schema);
    for (const s of ['', 'a', '😀', '😀😀', 'ab😀', '😀😀😀😀', 'abcd']) {
      expect(ours(s), s).toBe(ajvs(s));
      if (!ajvs(s)) expect(ours.errors?.[0]).toMatchObject({ keyword: ajvs.errors?.[0]?.keyword, params: ajvs.errors?.[0]?.params });
    }
  });

  it('decide a batch of 315,000-character conversations without reading a single character', () => {
    const long = 'x'.repeat(315_000);
    const validate = codePointLengths(new Ajv()).compile({ type: 'array', items: { type: 'string', minLength: 1, maxLength: 500_000 } });
    const batch = Array.from({ length: 100 }, () => long);
    // Counted, not timed: Ajv's own keywords read every code unit with charCodeAt.
    const original = String.prototype.charCodeAt;
    let reads = 0;
    String.prototype.charCodeAt = function (this: string, i: number) {
      reads++;
      return original.call(this, i);
    };
    try {
      expect(validate(batch)).toBe(true);
    } finally {
      String.prototype.charCodeAt = original;
    }
    expect(reads).toBe(0);
  });
});
