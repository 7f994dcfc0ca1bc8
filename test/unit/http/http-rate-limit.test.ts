// Rate limit per API key (not per IP): RATE_LIMIT_MAX per window, a batch counts once, probes never
// count, 429 carries Retry-After and a detail, every protected answer carries x-ratelimit-* headers
// and the IETF draft's RateLimit and RateLimit-Policy fields with the same figures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, chat, OTHER_KEY, startTestApp, TEST_KEY, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' } });
});
afterAll(async () => t.close());

const predict = (key: string, remoteAddress = '127.0.0.1') =>
  t.app.inject({ method: 'POST', url: '/predict', headers: bearer(key), payload: { conversation: chat(2) }, remoteAddress });

describe('rate limit', () => {
  it('allows RATE_LIMIT_MAX requests per key, then answers 429 with Retry-After and a detail; RateLimit and RateLimit-Policy agree with x-ratelimit-*', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await predict(TEST_KEY, `10.0.0.${i + 1}`);
      seen.push(res.statusCode);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(2 - i));
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
      // The IETF httpapi draft's fields, with the same figures.
      expect(res.headers['ratelimit-policy']).toBe('"per-key";q=3;w=60');
      expect(res.headers.ratelimit).toBe(`"per-key";r=${2 - i};t=${String(res.headers['x-ratelimit-reset'])}`);
    }
    expect(seen).toEqual([200, 200, 200]);
    // A different client address does not get a fresh quota: the bucket is the key.
    const limited = await predict(TEST_KEY, '10.9.9.9');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.json().detail).toMatch(/^Rate limit exceeded/);
    expect(limited.headers['ratelimit-policy']).toBe('"per-key";q=3;w=60');
    expect(limited.headers.ratelimit).toBe(`"per-key";r=0;t=${String(limited.headers['x-ratelimit-reset'])}`);
  });

  it('keeps a separate quota for each key', async () => {
    expect((await predict(OTHER_KEY)).statusCode).toBe(200);
  });

  it('an unauthenticated request carries no rate-limit fields (it spends no quota)', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/predict', payload: { conversation: chat(2) } });
    expect(res.statusCode).toBe(401);
    expect(res.headers.ratelimit).toBeUndefined();
    expect(res.headers['ratelimit-policy']).toBeUndefined();
  });

  it('counts a batch of many conversations once', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/batch_predict',
      headers: bearer(OTHER_KEY),
      payload: { conversations: Array.from({ length: 20 }, (_, i) => chat(2, i)) },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-remaining']).toBe('1');
  });

  it('never counts /health, /livez or /readyz', async () => {
    for (let i = 0; i < 10; i++) {
      for (const url of ['/health', '/livez', '/readyz']) {
        const res = await t.app.inject({ method: 'GET', url, headers: bearer(OTHER_KEY) });
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
    }
    const res = await predict(OTHER_KEY);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
  });

  it('does not spend a key quota on unauthenticated or wrong-key requests', async () => {
    const fresh = await startTestApp({ env: { RATE_LIMIT_MAX: '1' }, scorer: t.scorer });
    try {
      for (let i = 0; i < 5; i++) {
        await fresh.app.inject({ method: 'POST', url: '/predict', payload: { conversation: 'user1: hi' } });
        await fresh.app.inject({ method: 'POST', url: '/predict', headers: bearer('wrong'), payload: { conversation: 'user1: hi' } });
      }
      const res = await fresh.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: 'user1: hi' } });
      expect(res.statusCode).toBe(200);
    } finally {
      await fresh.close();
    }
  });

  it('counts 429s in the rate-limited metric', async () => {
    const text = await t.metrics.registry.getSingleMetricAsString('conversation_risk_rate_limited_requests_total');
    expect(text).toMatch(/conversation_risk_rate_limited_requests_total [1-9]/);
  });
});
