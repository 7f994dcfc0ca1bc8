// Property-based: random and malformed bodies, ages, headers and paths never produce a 500, never
// crash the app, and every error answer is JSON with a string detail.
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_KEY, startTestApp, TEST_KEY, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_MAX: '100000', BODY_LIMIT_BYTES: '200000' } });
});
afterAll(async () => t.close());

const RUNS = 200;

async function check(opts: InjectOptions): Promise<void> {
  const res = await t.app.inject(opts);
  expect(res.statusCode, `${opts.method} ${opts.url} -> ${res.statusCode} ${res.body.slice(0, 200)}`).toBeLessThan(500);
  // A HEAD answer has headers only.
  if (res.statusCode >= 400 && opts.method !== 'HEAD') {
    expect(typeof res.json().detail).toBe('string');
  }
}

const ageLike = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer({ min: -5, max: 500 }).map(String),
  fc.tuple(fc.nat(200), fc.nat(200)).map(([a, b]) => `${a}-${b}`),
  fc.constantFrom('minor', 'adult', 'Minor', ' 12 ', '1e3', '0x10', '١٢', '12-', '-'),
  fc.anything(),
);
const text = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.array(fc.tuple(fc.constantFrom('user1', 'user2', 'USER1', 'bob', 'ann', ''), fc.string({ maxLength: 40 })), { maxLength: 30 }).map(
    (turns) => turns.map(([s, x]) => `${s}: ${x}`).join('\n'),
  ),
);
const item = fc.oneof(
  text,
  fc.record({ conversation: text, age_a: ageLike, age_b: ageLike }, { requiredKeys: [] }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.anything(), { maxKeys: 4 }),
  fc.anything(),
);
const headersArb = fc.record(
  {
    authorization: fc.oneof(
      fc.constant(`Bearer ${TEST_KEY}`),
      fc.constant(`bearer ${OTHER_KEY}`),
      fc.string({ maxLength: 40 }).map((s) => `Bearer ${s}`),
      fc.string({ maxLength: 40 }),
    ),
    'content-type': fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', ''),
    'x-forwarded-for': fc.string({ maxLength: 30 }),
  },
  { requiredKeys: [] },
);

const withKey = (h: Record<string, string>) => ({ authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', ...h });
const printable = (h: Record<string, string>) =>
  Object.fromEntries(Object.entries(h).filter(([, v]) => /^[\t\x20-\x7e]*$/.test(v)));

describe('the API never answers 500 and never crashes', () => {
  it('on random /predict bodies with random ages', async () => {
    await fc.assert(
      fc.asyncProperty(fc.record({ conversation: text, age_a: ageLike, age_b: ageLike }, { requiredKeys: [] }), async (body) => {
        await check({ method: 'POST', url: '/predict', headers: withKey({}), payload: JSON.stringify(body) });
      }),
      { numRuns: RUNS },
    );
  });

  it('on random /batch_predict bodies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.record({ conversations: fc.array(item, { maxLength: 6 }) }), fc.anything()), async (body) => {
        await check({ method: 'POST', url: '/batch_predict', headers: withKey({}), payload: JSON.stringify(body) ?? '' });
      }),
      { numRuns: RUNS },
    );
  });

  it('on malformed and truncated JSON text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 200 }), fc.json().map((j) => j.slice(0, Math.max(0, j.length - 1)))), async (raw) => {
        await check({ method: 'POST', url: '/predict', headers: withKey({}), payload: raw });
      }),
      { numRuns: RUNS },
    );
  });

  it('on random headers, methods and paths', async () => {
    await fc.assert(
      fc.asyncProperty(
        headersArb,
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH'),
        fc.oneof(fc.constantFrom('/predict', '/batch_predict', '/info', '/health', '/readyz', '/livez'), fc.webPath()),
        fc.json(),
        async (headers, method, url, payload) => {
          const opts: InjectOptions = { method, url: url === '' ? '/' : url, headers: printable(headers) };
          if (method !== 'GET' && method !== 'HEAD') opts.payload = payload;
          await check(opts);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('still answers after all of the above', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health' });
    expect(res.json()).toEqual({ status: 'healthy' });
  });
});
