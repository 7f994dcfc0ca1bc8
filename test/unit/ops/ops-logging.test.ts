// What the logs never carry: conversation text, previews, bodies, query strings, API keys. Unique
// markers go through every endpoint and error path; then no captured line may contain any of them.
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess } from '../../helpers/process.ts';
import { bearer, captureLogs, FIXTURE_MODEL_DIR, OTHER_KEY, startTestApp, TEST_KEY, type TestApp } from '../../helpers/app.ts';

const M = (name: string) => `MARKER${name}${Math.random().toString(36).slice(2, 10)}`;
const markers = {
  predict: M('predict'),
  batchA: M('batchA'),
  batchB: M('batchB'),
  age: M('age'),
  field: M('field'),
  malformed: M('malformed'),
  large: M('large'),
  query: M('query'),
  path: M('path'),
  noauth: M('noauth'),
  wrongKey: M('wrongkey'),
  limited: M('limited'),
  degraded: M('degraded'),
  timeout: M('timeout'),
  header: M('header'),
};

const { logger, lines } = captureLogs('trace');
let t: TestApp;
let degraded: TestApp;
let slow: TestApp;

beforeAll(async () => {
  const env = { AUDIT_LOG: 'true', RATE_LIMIT_MAX: '6', BODY_LIMIT_BYTES: '65536' };
  t = await startTestApp({ env, logger });
  degraded = await startTestApp({ env: { ...env, MODEL_DIR: '/nonexistent/model' }, logger });
  slow = await startTestApp({ env: { ...env, REQUEST_TIMEOUT_MS: '1', BODY_LIMIT_BYTES: '4194304' }, logger });
});
afterAll(async () => {
  await t.close();
  await degraded.close();
  await slow.close();
});

const json = { 'content-type': 'application/json' };

describe('logs', () => {
  it('never contain conversation text, previews, bodies, query strings or keys, on any path', async () => {
    const conversation = `user1: hello ${markers.predict}\nuser2: hi there`;
    const answers: number[] = [];
    const send = async (app: TestApp, opts: InjectOptions) => {
      const res = await app.app.inject(opts);
      answers.push(res.statusCode);
      return res;
    };
    // success, single and batch
    await send(t, { method: 'POST', url: '/predict', headers: { ...bearer(), 'x-note': markers.header }, payload: { conversation } });
    await send(t, {
      method: 'POST',
      url: '/batch_predict',
      headers: bearer(),
      payload: { conversations: [`user1: ${markers.batchA}`, { conversation: `user2: ${markers.batchB}`, age_a: '30' }] },
    });
    // 401, 403
    await send(t, { method: 'POST', url: '/predict', payload: { conversation: markers.noauth } });
    await send(t, { method: 'POST', url: '/predict', headers: bearer(markers.wrongKey), payload: { conversation: 'x' } });
    // 422: bad age, unknown field, malformed JSON
    await send(t, { method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: 'user1: a', age_a: markers.age } });
    await send(t, { method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: 'user1: a', [markers.field]: 1 } });
    await send(t, { method: 'POST', url: '/predict', headers: { ...bearer(), ...json }, payload: `{"conversation": "${markers.malformed}` });
    // 413
    await send(t, { method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: markers.large.repeat(5000) } });
    // query string and unknown path
    await send(t, { method: 'GET', url: `/health?q=${markers.query}` });
    await send(t, { method: 'GET', url: `/${markers.path}` });
    // 429: exhaust the key's quota
    for (let i = 0; i < 6; i++) {
      await send(t, { method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: `user1: ${markers.limited}` } });
    }
    // 503: model not loaded; 503: scoring timed out
    await send(degraded, { method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: markers.degraded } });
    const timedOut = await send(slow, {
      method: 'POST',
      url: '/predict',
      headers: bearer(),
      payload: { conversation: `user1: ${markers.timeout} `.repeat(10_000) },
    });

    expect(timedOut.statusCode).toBe(503);
    expect(timedOut.headers['retry-after']).toBe('1');
    expect(answers).toEqual(expect.arrayContaining([200, 401, 403, 404, 413, 422, 429, 503]));
    expect(lines.length).toBeGreaterThan(answers.length);
    const forbidden = [...Object.values(markers), TEST_KEY];
    for (const line of lines) {
      for (const secret of forbidden) expect(line, `log line leaks ${secret}`).not.toContain(secret);
    }
  });

  it('writes one audit line per prediction with the SHA-256, score, band, speaker, model version and latency only', async () => {
    const conversation = 'user1: audited line\nuser2: ok';
    const before = lines.length;
    // OTHER_KEY: the first test spent TEST_KEY's quota.
    const res = await t.app.inject({
      method: 'POST',
      url: '/batch_predict',
      headers: bearer(OTHER_KEY),
      payload: { conversations: [conversation, conversation] },
    });
    expect(res.statusCode).toBe(200);
    const audits = lines.slice(before).map((l) => JSON.parse(l)).filter((l) => l.audit !== undefined);
    expect(audits).toHaveLength(2);
    const p = res.json().predictions[0];
    const m = t.scorer.manifest;
    expect(Object.keys(audits[0].audit).sort()).toEqual(
      ['conversation_sha256', 'harmful_score', 'latency_ms', 'model_version', 'predatory_user', 'risk_level'].sort(),
    );
    expect(audits[0].audit).toMatchObject({
      conversation_sha256: createHash('sha256').update(conversation).digest('hex'),
      harmful_score: p.harmful_score,
      risk_level: p.risk_level,
      predatory_user: p.predatory_user,
      model_version: `${m?.name}@${m?.version}`,
    });
    expect(Number.isInteger(audits[0].audit.latency_ms)).toBe(true);
  });

  it('with AUDIT_HASH_KEY_FILE, the audit line carries the HMAC-SHA-256 under that key instead of the plain SHA-256', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-key-'));
    const key = 'k'.repeat(16) + 'e'.repeat(16) + 'y';
    writeFileSync(join(dir, 'key'), `${key}\n`);
    const keyed = captureLogs('trace');
    const app = await startTestApp({ logger: keyed.logger, scorer: t.scorer, env: { AUDIT_LOG: 'true', AUDIT_HASH_KEY_FILE: join(dir, 'key') } });
    try {
      const conversation = 'user1: hi';
      const res = await app.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: { conversation } });
      expect(res.statusCode).toBe(200);
      const audit = keyed.lines.map((l) => JSON.parse(l)).find((l) => l.audit !== undefined)?.audit;
      expect(audit.conversation_hmac_sha256).toBe(createHmac('sha256', key).update(conversation).digest('hex'));
      // A guessed short chat can no longer be confirmed from the line without the key.
      expect(audit.conversation_sha256).toBeUndefined();
      expect(keyed.lines.join('\n')).not.toContain(createHash('sha256').update(conversation).digest('hex'));
      expect(keyed.lines.join('\n')).not.toContain(key);
    } finally {
      await app.close();
    }
  });

  it.each(['warn', 'error', 'silent'] as const)('writes the audit lines with AUDIT_LOG on and LOG_LEVEL %s, which quiets the rest', async (level) => {
    const quiet = captureLogs(level);
    const app = await startTestApp({ logger: quiet.logger, scorer: t.scorer, env: { AUDIT_LOG: 'true', LOG_LEVEL: level } });
    try {
      await app.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: 'user1: hi' } });
      await app.app.inject({ method: 'GET', url: '/nowhere', headers: bearer() });
      const lines = quiet.lines.map((l) => JSON.parse(l) as { audit?: unknown; level: number });
      expect(lines.filter((l) => l.audit !== undefined)).toHaveLength(1);
      expect(lines.filter((l) => l.audit === undefined && l.level < 40)).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('writes no audit line when AUDIT_LOG is off', async () => {
    const quiet = captureLogs('trace');
    const app = await startTestApp({ logger: quiet.logger, scorer: t.scorer });
    try {
      await app.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: 'user1: hi' } });
      expect(quiet.lines.length).toBeGreaterThan(0);
      expect(quiet.lines.some((l) => l.includes('"audit"'))).toBe(false);
    } finally {
      await app.close();
    }
  });

  it('prints a generated key once to stderr and never to the JSON log (stdout)', async () => {
    // No API_KEYS: the process must generate one.
    const server = await startServerProcess({ MODEL_DIR: FIXTURE_MODEL_DIR });
    server.child.kill('SIGTERM');
    await server.exited;
    const stdout = server.stdout();
    const stderr = server.stderr();
    const key = /Generated key for this process \(shown once\):\s+(\S+)/.exec(stderr)?.[1];
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(stderr.split(key as string)).toHaveLength(2);
    expect(stdout).not.toContain(key as string);
    expect(stdout).toMatch(/generated a key for this process/);
  });
});
