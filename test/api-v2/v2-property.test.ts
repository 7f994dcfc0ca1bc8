// Property-based: random and malformed /v2 bodies, headers and job ids never produce a 500 or crash,
// and every error answer is JSON with a string detail.
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_KEY, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    env: {
      RATE_LIMIT_MAX: '100000',
      BODY_LIMIT_BYTES: '200000',
      WEBHOOK_SECRET: 'whsec_' + Buffer.alloc(32, 3).toString('base64'),
      // Port 9 (discard) on loopback: nothing listens, so accepted webhooks fail fast, once.
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1:9,hooks.example.org:443',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_MAX_ATTEMPTS: '1',
      JOB_MAX_ITEMS: '5',
      JOB_MAX_QUEUED_PER_KEY: '1000',
    },
  });
});
afterAll(async () => t.close());

const RUNS = 150;

async function check(opts: InjectOptions): Promise<void> {
  const res = await t.app.inject(opts);
  expect(res.statusCode, `${opts.method} ${opts.url} -> ${res.statusCode} ${res.body.slice(0, 200)}`).toBeLessThan(500);
  if (res.statusCode >= 400) expect(typeof res.json().detail).toBe('string');
}

const headers = { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' };
const user = fc.oneof(fc.constantFrom('user1', 'user2'), fc.string({ maxLength: 6 }), fc.anything());
const textArb = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 100 }),
  fc.constantFrom('', '\n', 'hi\nuser2: x', '\u2028user1:', '\r\n\r\n'),
  fc.anything(),
);
const timestamp = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.string({ maxLength: 30 }),
  fc.constantFrom('2026-02-30T10:00:00Z', '2026-01-01T25:00:00Z', '2026-01-01T10:00:00', '2026-01-01'),
  fc.anything(),
);
const message = fc.oneof(
  fc.record({ user, text: textArb, timestamp }, { requiredKeys: [] }),
  fc.record({ user: fc.constantFrom('user1', 'user2'), text: fc.string({ maxLength: 80 }) }),
  fc.anything(),
);
const messages = fc.oneof(fc.array(message, { maxLength: 8 }), fc.anything());
const age = fc.oneof(fc.constantFrom('13', 'adult', 'minor', '12-15', '15-12', ''), fc.string({ maxLength: 8 }), fc.anything());
const conversation = fc.oneof(
  fc.record({ id: fc.oneof(fc.string({ maxLength: 10 }), fc.anything()), messages, age_a: age, age_b: age }, { requiredKeys: [] }),
  fc.anything(),
);
const webhookUrl = fc.oneof(
  fc.constantFrom(
    'http://127.0.0.1:9/x',
    'https://hooks.example.org/x',
    'https://HOOKS.example.org:443/x',
    'http://user:pw@127.0.0.1:9/',
    'https://hooks.example.org:444/',
    'javascript:alert(1)',
    'http://[::1]:9/',
    'https://xn--nxasmq6b.example/',
  ),
  fc.webUrl(),
  fc.string({ maxLength: 40 }),
  fc.anything(),
);

describe('/v2 never answers 500 to any body', () => {
  it('POST /v2/predict with random messages and ages', async () => {
    await fc.assert(
      fc.asyncProperty(fc.record({ messages, age_a: age, age_b: age }, { requiredKeys: [] }), async (body) => {
        await check({ method: 'POST', url: '/v2/predict', headers, payload: JSON.stringify(body) });
      }),
      { numRuns: RUNS },
    );
  });

  it('POST /v2/predict/batch with random conversations, modes, webhook URLs and Idempotency-Keys', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            conversations: fc.oneof(fc.array(conversation, { maxLength: 6 }), fc.anything()),
            mode: fc.oneof(fc.constant('batch'), fc.string({ maxLength: 8 }), fc.anything()),
            webhook_url: webhookUrl,
          },
          { requiredKeys: [] },
        ),
        fc.option(fc.string({ maxLength: 300 }), { nil: undefined }),
        async (body, idem) => {
          const h = idem === undefined ? headers : { ...headers, 'idempotency-key': idem };
          await check({ method: 'POST', url: '/v2/predict/batch', headers: h, payload: JSON.stringify(body) });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('GET /v2/predict/batch/<anything>', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.uuid(), fc.string({ maxLength: 100 })), async (id) => {
        await check({ method: 'GET', url: `/v2/predict/batch/${encodeURIComponent(id)}`, headers });
      }),
      { numRuns: RUNS },
    );
  });
});
