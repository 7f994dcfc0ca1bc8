// The JSON body parser bounds nesting before JSON.parse runs: bombs are refused in a linear scan,
// while brackets inside strings (chat text is full of them) never count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../../../src/http/json-body.ts';
import { bearer, startTestApp, type TestApp } from '../../helpers/app.ts';

const bytes = (s: string) => Buffer.from(s, 'utf8');

describe('jsonDepthExceeds', () => {
  it('counts arrays and objects, stops at the limit, and skips strings with escaped quotes', () => {
    expect(jsonDepthExceeds(bytes('{"a":[[1]]}'), 3)).toBe(false);
    expect(jsonDepthExceeds(bytes('{"a":[[[1]]]}'), 3)).toBe(true);
    expect(jsonDepthExceeds(bytes('{"t":"[[[[[[ \\" {{{{ ]]"}'), 1)).toBe(false);
    expect(jsonDepthExceeds(bytes('[] [] [] []'), 1)).toBe(false);
    expect(jsonDepthExceeds(Buffer.alloc(1_000_000, '['), MAX_JSON_DEPTH)).toBe(true);
  });

  it('ends a string only at a quote after an even run of backslashes', () => {
    expect(jsonDepthExceeds(bytes(String.raw`["a\\"[[[]`), 2)).toBe(true); // a\\ then the closing quote
    expect(jsonDepthExceeds(bytes(String.raw`["a\"[[["]`), 2)).toBe(false); // an escaped quote: the brackets are text
    expect(jsonDepthExceeds(bytes(String.raw`["\\\\\\",[[[1]]]]`), 3)).toBe(true); // six backslashes, then the closing quote
    expect(jsonDepthExceeds(bytes('["unterminated [[[[[['), 1)).toBe(false);
  });

  it('agrees with the nesting JSON.parse finds, on any JSON value', async () => {
    const { default: fc } = await import('fast-check');
    const depthOf = (v: unknown): number => (v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v as object).map(depthOf)) : 0);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 7 }), (value, limit) => {
        expect(jsonDepthExceeds(bytes(JSON.stringify(value)), limit)).toBe(depthOf(value) > limit);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('the body parser on a route', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());
  /** POST /predict with `payload` sent as it is, as application/json. */
  const postRaw = (payload: string) => t.app.inject({ method: 'POST', url: '/predict', headers: { ...bearer(), 'content-type': 'application/json' }, payload });

  it('refuses nesting deeper than any valid request with a 422 detail', async () => {
    const deep = `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`;
    const res = await postRaw(deep);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toBe(`body: nested deeper than ${MAX_JSON_DEPTH} levels; no valid request does`);
  });

  it('scores a conversation whose text is full of brackets and quotes', async () => {
    const conversation = 'user1: [[[{{{ "quoted" ]]]}}} \\\\ [\nuser2: ok';
    const res = await t.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: { conversation } });
    expect(res.statusCode).toBe(200);
  });

  it('still rejects malformed JSON and prototype poisoning as before', async () => {
    const bad = await postRaw('{"conversation":');
    expect(bad.statusCode).toBe(422);
    const proto = await postRaw('{"conversation":"user1: hi","__proto__":{"x":1}}');
    // The parser refuses it, and says why (a schema refusal of an unknown "__proto__" field would read
    // 'body: unknown field'); broken JSON is still called that.
    expect(bad.json()).toEqual({ detail: 'body: malformed JSON', code: 'malformed_json' });
    expect(proto.statusCode).toBe(422);
    expect(proto.json()).toEqual({ detail: 'body: a "__proto__" key, or a "constructor" key holding "prototype", is not allowed', code: 'forbidden_key' });
    const ctor = await postRaw('{"conversation":"user1: hi","constructor":{"prototype":{"x":1}}}');
    expect(ctor.statusCode).toBe(422);
    expect(ctor.json().detail).toMatch(/"constructor" key holding "prototype"/);
  });
});
