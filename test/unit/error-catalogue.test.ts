// The error catalogue is the one list of what the service can answer: every code is documented in the
// README's Errors section with its status, and every text comes from the catalogue alone.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS, errorText, type ErrorCode } from '../../src/error-catalogue.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('### Errors\n'), readme.indexOf('## Architecture\n'));
const codes = Object.keys(ERRORS) as ErrorCode[];

describe('error catalogue', () => {
  it('codes are stable snake_case names, each defined once', () => {
    for (const code of codes) expect(code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it("every code appears in the README's Errors section, in a row of its own status", () => {
    const rows = section.split('\n').filter((l) => /^\| \d{3} \|/.test(l));
    const missing: string[] = [];
    for (const code of codes) {
      if (!section.includes(`\`${code}\``)) missing.push(code);
      const row = rows.find((r) => r.split('|')[2]?.includes(`\`${code}\``));
      if (row !== undefined) expect(Number(row.split('|')[1]), code).toBe(ERRORS[code].status);
    }
    expect(missing).toEqual([]);
  });

  it('texts fill in their parameters and never leave a placeholder', () => {
    expect(errorText({ code: 'per_key_limit', params: { max: 7 } })).toBe('This API key already has 7 unfinished jobs (JOB_MAX_QUEUED_PER_KEY); retry when one finishes');
    expect(errorText({ code: 'invalid_age', params: { where: 'conversations[2].', field: 'age_a', maxAge: 120 } })).toMatch(/^conversations\[2\]\.age_a must be/);
    expect(errorText({ code: 'invalid_age', params: { field: 'age_b', maxAge: 120 } })).toMatch(/^age_b must be/);
    for (const code of codes) expect(ERRORS[code].status).toBeGreaterThanOrEqual(300);
  });
});
