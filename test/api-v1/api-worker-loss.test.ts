// A scoring worker that exits mid-call is a fault the client can retry, not a
// bug: the call it was running answers 503 scoring_interrupted with Retry-After, and piscina's
// replacement serves the next one. A replacement that cannot load the model (the package changed on
// disk since start) makes the service degraded, as a model that never loaded does: /health says so,
// /readyz takes the pod out of rotation, the model_loaded metric falls to 0, and scoring answers 503
// model_unavailable rather than a 500 for every request that worker receives.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Piscina } from 'piscina';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearer, captureLogs, chat, FIXTURE_MODEL_DIR, startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

/** The scorer's piscina, caught as it runs its first task: its threads are the real worker threads. */
let pool: Piscina;
const workerThreads = () => pool.threads;

let dir: string;
let t: TestApp;
const logs = captureLogs('info');
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'api-worker-loss-'));
  cpSync(FIXTURE_MODEL_DIR, dir, { recursive: true });
  t = await startTestApp({ env: { MODEL_DIR: dir, WORKERS: '1' }, logger: logs.logger });
  const run = vi.spyOn(Piscina.prototype, 'run');
  expect((await predict(chat(2))).statusCode).toBe(200);
  pool = run.mock.contexts[0] as Piscina;
  run.mockRestore();
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const predict = (conversation: string) => t.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: { conversation } });

describe('a scoring worker that stops mid-call', () => {
  it('answers the call it was running 503 scoring_interrupted with Retry-After: 1, and the next call 200', async () => {
    const long = 'user1: hello there, do you like music games and movies? tell me about your school day\n'.repeat(5600).slice(0, 500_000);
    const pending = predict(long);
    await until(async () => (t.scorer.inFlight > 0 ? true : undefined), 15_000);
    await workerThreads()[0]?.terminate();
    const res = await pending;
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ detail: 'Scoring was interrupted (a scoring worker stopped and is being replaced); retry', code: 'scoring_interrupted' });
    expect(res.headers['retry-after']).toBe('1');
    expect((await predict(chat(4))).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/health' })).json()).toEqual({ status: 'healthy' });
  });

  it('whose replacement cannot load the changed package: logged once with why, /health degraded, /readyz 503, model_loaded 0, /predict 503 model_unavailable', async () => {
    writeFileSync(join(dir, 'tokenizer.json'), readFileSync(join(dir, 'tokenizer.json'), 'utf8') + ' ');
    await workerThreads()[0]?.terminate();
    await until(async () => (!t.scorer.ready ? true : undefined), 15_000);
    const degraded = logs.lines.map((l) => JSON.parse(l) as { msg: string; reason?: string }).filter((l) => l.msg.startsWith('a scoring worker could not load the model'));
    expect(degraded).toHaveLength(1);
    expect(degraded[0]?.reason).toMatch(/SHA-256 mismatch for tokenizer\.json/);
    expect((await t.app.inject({ method: 'GET', url: '/health' })).json()).toEqual({ status: 'degraded' });
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'degraded', reasons: ['model_not_loaded'] });
    expect(await t.metrics.registry.metrics()).toMatch(/^conversation_risk_model_loaded(\{[^}]*\})? 0$/m);
    const res = await predict(chat(4));
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('model_unavailable');
    expect(res.headers['retry-after']).toBe('30');
  });
});
