import { describe, expect, it } from 'vitest';
import { errorText } from '../../../src/error-catalogue.ts';
import { ageError as ageProblem, ageFeatures, parseAge, usedAgeFeatures } from '../../../src/scoring/ages.ts';

/** The text the service answers for the age, or undefined when it is valid. */
const ageError = (field: 'age_a' | 'age_b', value: string): string | undefined => {
  const problem = ageProblem(field, value);
  return problem === undefined ? undefined : errorText(problem);
};

describe('ages: exact, range or class', () => {
  it('accepts an exact integer age from 0 to 120', () => {
    expect(parseAge('0')).toEqual({ lo: 0, hi: 0, pMinor: 1 });
    expect(parseAge('17')).toEqual({ lo: 17, hi: 17, pMinor: 1 });
    expect(parseAge('18')).toEqual({ lo: 18, hi: 18, pMinor: 0 });
    expect(parseAge(' 120 ')).toEqual({ lo: 120, hi: 120, pMinor: 0 });
  });

  it('reads leading zeros as the same integer, however many', () => {
    for (const v of ['013', '0013', '0000000013']) expect(parseAge(v), v).toEqual(parseAge('13'));
    expect(parseAge('0000')).toEqual(parseAge('0'));
    expect(parseAge('0121')).toBeUndefined();
  });

  it('accepts a range min-max with min <= max, giving the fraction of years under 18', () => {
    expect(parseAge('13-15')).toEqual({ lo: 13, hi: 15, pMinor: 1 });
    expect(parseAge('16-19')).toEqual({ lo: 16, hi: 19, pMinor: 0.5 });
    expect(parseAge('30 - 30')).toEqual({ lo: 30, hi: 30, pMinor: 0 });
  });

  it('accepts the classes minor [8,17] and adult [18,80] in any case', () => {
    expect(parseAge('Minor')).toEqual({ lo: 8, hi: 17, pMinor: 1 });
    expect(parseAge('ADULT')).toEqual({ lo: 18, hi: 80, pMinor: 0 });
  });

  it.each(['', ' ', '-1', '121', '12.5', '1e2', '15-13', '10-121', 'teen', 'minor adult', '0x10', '12-', '-12', '１２', '9'.repeat(400)])(
    'rejects %j',
    (v) => {
      expect(parseAge(v)).toBeUndefined();
      expect(ageError('age_b', v)).toMatch(/^age_b /);
    },
  );

  it('names the field in the error and says nothing for a valid age', () => {
    expect(ageError('age_a', 'old')).toContain('age_a');
    expect(ageError('age_a', '42')).toBeUndefined();
  });

  it('builds 8 features: user1 then user2, each present, p_minor, lo/100, hi/100; absent is zeros', () => {
    expect(ageFeatures('14', undefined)).toEqual([1, 1, 0.14, 0.14, 0, 0, 0, 0]);
    expect(ageFeatures(undefined, 'adult')).toEqual([0, 0, 0, 0, 1, 0, 0.18, 0.8]);
    expect(ageFeatures()).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('uses age features when either age is supplied', () => {
    expect(usedAgeFeatures('12')).toBe(true);
    expect(usedAgeFeatures(undefined, 'minor')).toBe(true);
    expect(usedAgeFeatures()).toBe(false);
  });

  it('refuses an invalid age that reaches the engine instead of treating it as absent', () => {
    expect(() => ageFeatures('old')).toThrow(TypeError);
  });
});
