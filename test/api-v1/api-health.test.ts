// Probes and /info, healthy and degraded: a missing model keeps the process up, /health says degraded,
// /readyz 503, scoring 503.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, chat, startTestApp, type TestApp } from '../helpers/app.ts';

let healthy: TestApp;
let degraded: TestApp;
beforeAll(async () => {
  healthy = await startTestApp();
  degraded = await startTestApp({ env: { MODEL_DIR: '/nonexistent/model-dir' } });
});
afterAll(async () => {
  await healthy.close();
  await degraded.close();
});

const get = (t: TestApp, url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

describe('probes with the model loaded', () => {
  it('GET /health answers 200 {"status":"healthy"}', async () => {
    const res = await get(healthy, '/health');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'healthy' });
  });
  it('GET /livez and GET /readyz answer 200', async () => {
    expect((await get(healthy, '/livez')).statusCode).toBe(200);
    expect((await get(healthy, '/readyz')).json()).toEqual({ status: 'healthy' });
  });
  it('GET /info returns the manifest: name, version, file hashes, metrics', async () => {
    const res = await get(healthy, '/info', bearer());
    expect(res.statusCode).toBe(200);
    const info = res.json();
    const m = healthy.scorer.manifest;
    expect(info.name).toBe(m?.name);
    expect(info.version).toBe(m?.version);
    expect(info.files['model.onnx'].sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(info.files['tokenizer.json'].sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(info).toHaveProperty('metrics');
  });
});

describe('degraded: the model is not loaded', () => {
  it('GET /health still answers 200, with {"status":"degraded"}', async () => {
    const res = await get(degraded, '/health');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'degraded' });
  });
  it('GET /readyz answers 503 naming model_not_loaded, while /livez answers 200', async () => {
    const ready = await get(degraded, '/readyz');
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'degraded', reasons: ['model_not_loaded'] });
    expect((await get(degraded, '/livez')).statusCode).toBe(200);
  });
  it('scoring answers 503 with a detail and Retry-After', async () => {
    for (const [url, payload] of [
      ['/predict', { conversation: chat(2) }],
      ['/batch_predict', { conversations: [chat(2)] }],
    ] as const) {
      const res = await degraded.app.inject({ method: 'POST', url, headers: bearer(), payload });
      expect(res.statusCode).toBe(503);
      expect(res.json().detail).toMatch(/not loaded/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect((await get(degraded, '/info', bearer())).statusCode).toBe(503);
  });
  it('still validates and authenticates first: 401 and 422 before 503', async () => {
    expect((await degraded.app.inject({ method: 'POST', url: '/predict', payload: { conversation: 'x' } })).statusCode).toBe(401);
    expect(
      (await degraded.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: '' } })).statusCode,
    ).toBe(422);
  });
});

describe('overload', () => {
  it('answers 503 with Retry-After at once when the scoring queue is full', async () => {
    const tiny = await startTestApp({ env: { MAX_QUEUE: '1', WORKERS: '1', RATE_LIMIT_MAX: '1000' } });
    try {
      const long = { conversation: chat(3000) };
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => tiny.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: long })),
      );
      const codes = answers.map((a) => a.statusCode);
      expect(codes).toContain(200);
      expect(codes).toContain(503);
      for (const a of answers.filter((x) => x.statusCode === 503)) {
        expect(a.json().detail).toMatch(/queue is full/);
        expect(a.headers['retry-after']).toBe('1');
      }
    } finally {
      await tiny.close();
    }
  });
});
