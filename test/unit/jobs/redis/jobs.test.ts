// Several replicas sharing a real Redis server (REDIS_URL): one per-key rate limit, jobs readable and
// run on any replica, a replica killed mid-job losing nothing, each webhook delivered once, and no
// conversation text or webhook URL in Redis. Two service instances each time, scored by the real engine.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { messagesToConversation, type Message } from '../../../../src/routes/v2/messages.ts';
import { until } from '../../../helpers/wait.ts';
import { bearer, captureLogs, OTHER_KEY, startTestApp, TEST_KEY, type TestApp } from '../../../helpers/app.ts';
import { startServerProcess, type ServerProcess } from '../../../helpers/process.ts';
import { startRedis, type RedisServer } from '../../../helpers/redis.ts';
import { startTcpProxy } from '../../../helpers/tcp-proxy.ts';
import { startReceiver, verifyStandardWebhook, type Receiver } from '../../../helpers/webhook-receiver.ts';

const SECRET = 'whsec_' + Buffer.alloc(32, 5).toString('base64');
const MARKER = 'MARKER-4f7a2b-never-in-redis';
/** The receiver's token in a webhook URL's query: sealed like the conversations. */
const URL_MARKER = 'URLMARKER-93c1d0-never-in-redis';

let redis: RedisServer;
let receiver: Receiver;
const apps: TestApp[] = [];

beforeAll(async () => {
  redis = await startRedis();
  receiver = await startReceiver();
});
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
  receiver.requests.length = 0;
});
afterAll(async () => {
  await receiver.close();
  await redis.stop();
});

const sharedEnv = (extra: Record<string, string> = {}) => ({
  REDIS_URL: redis.url,
  REDIS_ENCRYPTION_KEY_FILE: redis.keyFile,
  REDIS_KEY_PREFIX: `t${Math.random().toString(36).slice(2, 10)}`,
  WEBHOOK_SECRET: SECRET,
  WEBHOOK_ALLOWED_HOSTS: receiver.hostPort,
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_RETRY_BASE_MS: '20',
  ...extra,
});

/** Two replicas on the same Redis (same key prefix), each with its own scorer. */
async function twoReplicas(env: Record<string, string>): Promise<[TestApp, TestApp]> {
  const a = await startTestApp({ env });
  const b = await startTestApp({ env });
  apps.push(a, b);
  return [a, b];
}

const messages = (n: number, seed = 0) =>
  Array.from({ length: n }, (_, i) => ({
    user: i % 2 === 0 ? 'user1' : 'user2',
    text: i === 1 ? `${MARKER} private words ${seed}` : `line ${i} about school and games ${seed}`,
  }));

interface PolledJob {
  status: string;
  progress: { done: number; total: number };
  results: Record<string, unknown>;
  webhook?: { status: string; attempts: number };
}
const pollJob = async (url: string): Promise<PolledJob> => (await (await fetch(url, { headers: bearer() })).json()) as PolledJob;

/** Every key in the Redis server with all it holds, one line per key: names, fields, members, values. */
async function dumpRedis(): Promise<string> {
  const c = new Redis(redis.url);
  const lines: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await c.scan(cursor, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const type = await c.type(key);
        const value =
          type === 'string' ? [await c.get(key)]
          : type === 'hash' ? Object.entries(await c.hgetall(key)).flat()
          : type === 'list' ? await c.lrange(key, 0, -1)
          : type === 'set' ? await c.smembers(key)
          : type === 'zset' ? await c.zrange(key, 0, -1)
          : type === 'stream' ? (await c.xrange(key, '-', '+')).flatMap(([id, fields]) => [id, ...fields])
          : [`(${type})`];
        lines.push(`${key} ${type} ${value.join(' ')}`);
      }
    } while (cursor !== '0');
  } finally {
    c.disconnect();
  }
  return lines.join('\n');
}


describe('the per-key rate limit holds exactly across replicas', () => {
  it('reports Redis reachable at start in its log and as dependency_up 1, and is ready', async () => {
    const { logger, lines } = captureLogs('info');
    const t = await startTestApp({ logger, env: sharedEnv() });
    apps.push(t);
    expect(lines.some((l) => JSON.parse(l).msg === 'shared state (Redis) reachable')).toBe(true);
    expect(await t.metrics.registry.metrics()).toContain('conversation_risk_dependency_up{dependency="redis"} 1');
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'healthy' });
  });

  it('lets exactly RATE_LIMIT_MAX of 60 requests with one key through, spread over two replicas', async () => {
    const [a, b] = await twoReplicas(sharedEnv({ RATE_LIMIT_MAX: '30', RATE_LIMIT_WINDOW_MS: '60000' }));
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      const t = i % 2 === 0 ? a : b;
      statuses.push((await t.app.inject({ method: 'GET', url: '/info', headers: bearer() })).statusCode);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    // Another key has its own budget on both.
    expect((await a.app.inject({ method: 'GET', url: '/info', headers: bearer(OTHER_KEY) })).statusCode).toBe(200);
  });
});

describe('v2 jobs through Redis and BullMQ', () => {
  it('a job submitted to one replica is done and readable on the other, by its creating key only', async () => {
    const [a, b] = await twoReplicas(sharedEnv());
    const res = await a.app.inject({
      method: 'POST',
      url: '/v2/predict/batch',
      headers: bearer(),
      payload: { mode: 'batch', conversations: Array.from({ length: 6 }, (_, i) => ({ id: `c${i}`, messages: messages(8, i), explain: i === 0 })) },
    });
    expect(res.statusCode).toBe(202);
    const url = res.json().poll_url as string;
    const job = await until(async () => {
      const j = (await b.app.inject({ method: 'GET', url, headers: bearer() })).json();
      return j.status === 'done' ? j : undefined;
    });
    expect(Object.keys(job.results)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5']);
    expect(job.progress).toEqual({ done: 6, total: 6 });
    expect(job.results.c0.explanation.turn_scores).toHaveLength(8);
    expect((await b.app.inject({ method: 'GET', url, headers: bearer(OTHER_KEY) })).statusCode).toBe(404);
    // The queue's gauges read Redis, so both replicas report the shared queue.
    const metrics = await b.metrics.registry.metrics();
    expect(metrics).toMatch(/conversation_risk_job_queue_items\{state="waiting"\} 0/);
    expect(metrics).toMatch(/conversation_risk_job_stalled_recoveries_total 0/);
    expect(metrics).toMatch(/conversation_risk_jobs_queue_depth 0/);
    expect((await a.app.inject({ method: 'GET', url: '/v2/predict/batch/00000000-0000-4000-8000-000000000000', headers: bearer() })).statusCode).toBe(404);
    // A job id is a UUID: one with a suffix names none, not a neighbouring key of this job (which read
    // as a Redis failure: 503 jobs_unavailable).
    for (const suffix of [':finished', ':results', '.0']) {
      const other = await a.app.inject({ method: 'GET', url: `${url}${encodeURIComponent(suffix)}`, headers: bearer() });
      expect(other.statusCode, suffix).toBe(404);
      expect(other.json().code).toBe('job_not_found');
    }
  });

  it('keeps the per-key job limit across replicas and replays an Idempotency-Key on the other one', async () => {
    const [a, b] = await twoReplicas(sharedEnv({ JOB_MAX_QUEUED_PER_KEY: '1' }));
    const body = { mode: 'batch', conversations: Array.from({ length: 30 }, (_, i) => ({ id: `c${i}`, messages: messages(40, i) })) };
    const first = await a.app.inject({ method: 'POST', url: '/v2/predict/batch', headers: { ...bearer(), 'idempotency-key': 'k-1' }, payload: body });
    expect(first.statusCode).toBe(202);
    const replay = await b.app.inject({ method: 'POST', url: '/v2/predict/batch', headers: { ...bearer(), 'idempotency-key': 'k-1' }, payload: body });
    expect(replay.statusCode).toBe(202);
    expect(replay.json().job_id).toBe(first.json().job_id);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const second = await b.app.inject({ method: 'POST', url: '/v2/predict/batch', headers: bearer(), payload: { ...body, conversations: body.conversations.slice(0, 1) } });
    expect(second.statusCode).toBe(429);
    await until(async () => ((await a.app.inject({ method: 'GET', url: first.json().poll_url, headers: bearer() })).json().status === 'done' ? true : undefined));
  });

  it('two submissions with one Idempotency-Key sent at once to two replicas make one job', async () => {
    const [a, b] = await twoReplicas(sharedEnv());
    const body = { mode: 'batch', conversations: [{ id: 'c0', messages: messages(4) }] };
    const send = (t: TestApp) => t.app.inject({ method: 'POST', url: '/v2/predict/batch', headers: { ...bearer(), 'idempotency-key': 'race-1' }, payload: body });
    const [ra, rb] = await Promise.all([send(a), send(b)]);
    expect([ra.statusCode, rb.statusCode]).toEqual([202, 202]);
    expect(ra.json().job_id).toBe(rb.json().job_id);
    expect([ra.headers['idempotent-replayed'], rb.headers['idempotent-replayed']].filter((h) => h === 'true')).toHaveLength(1);
  });

  it('delivers each webhook exactly once, signed, and puts no conversation text and no webhook URL in Redis', async () => {
    const monitor = await redis.monitor();
    let ids: string[] = [];
    let stored = '';
    try {
      const [a, b] = await twoReplicas(sharedEnv());
      const submit = (t: TestApp, n: number) =>
        t.app.inject({
          method: 'POST',
          url: '/v2/predict/batch',
          headers: bearer(TEST_KEY),
          payload: { mode: 'batch', webhook_url: receiver.url(`/hook/path?token=${URL_MARKER}`), conversations: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, messages: messages(6, i) })) },
        });
      ids = [(await submit(a, 4)).json().job_id, (await submit(b, 3)).json().job_id, (await submit(a, 5)).json().job_id];
      await receiver.waitFor(3, 30_000);
      // Time for a duplicate to arrive, were there one.
      await new Promise((r) => setTimeout(r, 500));
      const delivered = receiver.requests.map((r) => JSON.parse(r.body).data.job_id as string);
      expect(delivered.sort()).toEqual([...ids].sort());
      for (const r of receiver.requests) expect(verifyStandardWebhook(SECRET, r)).toBe(true);
      // Delivered to the URL as submitted, token included: the sealed URL opens on either replica.
      expect(receiver.requests.map((r) => r.path)).toEqual(Array.from({ length: 3 }, () => `/hook/path?token=${URL_MARKER}`));
      const job = (await b.app.inject({ method: 'GET', url: `/v2/predict/batch/${ids[0]}`, headers: bearer() })).json();
      expect(job.webhook).toMatchObject({ status: 'delivered', attempts: 1 });
      // What stays in Redis while the finished jobs live (JOB_RESULT_TTL_MS): every key and value.
      stored = await dumpRedis();
    } finally {
      await monitor.stop();
    }
    const seen = monitor.lines.join('\n');
    // The monitor saw the queued items (sealed) and the stored scores, so it was watching the right server.
    expect(seen).toMatch(/sealed/);
    expect(seen).toMatch(/harmfulness_score/);
    expect(seen).toMatch(/webhookUrl/);
    expect(seen).not.toContain(MARKER);
    expect(seen).not.toContain('private words');
    expect(seen).not.toContain(URL_MARKER);
    expect(seen).not.toContain('/hook/path');
    // The scan read the jobs' records, with their (sealed) webhook URL and their results.
    for (const id of ids) expect(stored).toMatch(new RegExp(`:job:${id} hash .*webhookUrl`));
    expect(stored).toMatch(/harmfulness_score/);
    expect(stored).not.toContain(MARKER);
    expect(stored).not.toContain('private words');
    expect(stored).not.toContain(URL_MARKER);
    expect(stored).not.toContain('/hook/path');
    // Nor the caller's API key, nor the webhook signing secret.
    expect(stored).not.toContain(TEST_KEY);
    expect(stored).not.toContain(SECRET.slice('whsec_'.length));
  });

  it('while Redis is unreachable from the start: says so in the log and dependency_up 0, /metrics still answers, jobs 503 with Retry-After, /readyz names redis_unreachable; v1 scoring still works', async () => {
    const { logger, lines } = captureLogs('info');
    const a = await startTestApp({ logger, env: sharedEnv({ REDIS_URL: 'redis://:pw-MARKER-9c1@127.0.0.1:1', SHUTDOWN_GRACE_MS: '1000' }) });
    apps.push(a);
    // Unreachable from the start: said at start, not only on a later change.
    const down = lines.map((l) => JSON.parse(l)).filter((l) => l.reason === 'redis_unreachable');
    expect(down).toHaveLength(1);
    expect(down[0].msg).toMatch(/unreachable/);
    expect(lines.join('\n')).not.toContain('pw-MARKER-9c1');
    // A scrape answers while Redis is down (BullMQ's counts once waited for it without limit).
    const scrapeStarted = Date.now();
    const metrics = await a.metrics.registry.metrics();
    expect(Date.now() - scrapeStarted).toBeLessThan(3000);
    expect(metrics).toContain('conversation_risk_dependency_up{dependency="redis"} 0');
    const res = await a.app.inject({ method: 'POST', url: '/v2/predict/batch', headers: bearer(), payload: { mode: 'batch', conversations: [{ id: 'c', messages: messages(2) }] } });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.json().detail).toMatch(/job store/);
    const ready = await a.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({ status: 'degraded', reasons: ['redis_unreachable'] });
    const live = await a.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: 'user1: hi\nuser2: hello' } });
    expect(live.statusCode).toBe(200);
  });
});

describe('a Redis that fails for a while loses nothing', () => {
  it('finishes a job with every result, one webhook and an audit line per item when every Redis connection drops mid-job for 1.5 s', async () => {
    const proxy = await startTcpProxy(redis.port);
    try {
      const { logger, lines } = captureLogs('info');
      const t = await startTestApp({ logger, env: sharedEnv({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, AUDIT_LOG: 'true' }) });
      apps.push(t);
      const n = 400;
      const res = await t.app.inject({
        method: 'POST',
        url: '/v2/predict/batch',
        headers: bearer(),
        payload: { mode: 'batch', webhook_url: receiver.url('/blip'), conversations: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, messages: messages(6, i) })) },
      });
      expect(res.statusCode).toBe(202);
      const url = res.json().poll_url as string;
      const poll = async () => (await t.app.inject({ method: 'GET', url, headers: bearer() })).json();
      await until(async () => ((await poll()).progress?.done >= 20 ? true : undefined), 60_000);
      await proxy.cut(1500);
      const job = await until(async () => {
        const j = await poll().catch(() => undefined);
        return j?.status === 'done' || j?.status === 'failed' ? j : undefined;
      }, 90_000, 100);
      expect(job.status).toBe('done');
      expect(job.progress).toEqual({ done: n, total: n });
      expect(Object.keys(job.results)).toHaveLength(n);
      await receiver.waitFor(1, 30_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.requests.filter((r) => r.path === '/blip')).toHaveLength(1);
      // An item that ran again is audited again, under the same job and position: counted once per pair.
      const audits = lines.filter((l) => l.includes('"log":"audit"')).map((l) => JSON.parse(l).audit as { job_id: string; job_item: number; conversation_sha256: string });
      expect(audits.length).toBeGreaterThanOrEqual(n);
      expect(new Set(audits.map((a) => a.job_id))).toEqual(new Set([res.json().job_id]));
      const hashOf = new Map<number, Set<string>>();
      for (const a of audits) hashOf.set(a.job_item, (hashOf.get(a.job_item) ?? new Set()).add(a.conversation_sha256));
      expect([...hashOf.keys()].sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i));
      for (const [i, hashes] of hashOf) expect([...hashes]).toEqual([createHash('sha256').update(messagesToConversation(messages(6, i) as Message[])).digest('hex')]);
      // The job's budget is given back: a new job of the key is accepted and finishes.
      const again = await t.app.inject({ method: 'POST', url: '/v2/predict/batch', headers: bearer(), payload: { mode: 'batch', conversations: [{ id: 'x', messages: messages(2) }] } });
      expect(again.statusCode).toBe(202);
    } finally {
      await proxy.close();
    }
  }, 180_000);

  it('reads as not ready while Redis hangs, answers jobs 503 and v1 within seconds, and is ready again once it answers', async () => {
    const proxy = await startTcpProxy(redis.port);
    try {
      const t = await startTestApp({ env: sharedEnv({ REDIS_URL: `redis://127.0.0.1:${proxy.port}` }) });
      apps.push(t);
      const ready = async () => (await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode;
      await until(async () => ((await ready()) === 200 ? true : undefined), 10_000);
      proxy.freeze();
      await until(async () => ((await ready()) === 503 ? true : undefined), 10_000, 100);
      const t0 = Date.now();
      const live = await t.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: 'user1: hi\nuser2: hello' } });
      expect(live.statusCode).toBe(200);
      const job = await t.app.inject({ method: 'POST', url: '/v2/predict/batch', headers: bearer(), payload: { mode: 'batch', conversations: [{ id: 'c', messages: messages(2) }] } });
      expect(job.statusCode).toBe(503);
      expect(job.headers['retry-after']).toBeDefined();
      // One limiter timeout (1 s) and one store timeout (5 s) for the submission, not a hang.
      expect(Date.now() - t0).toBeLessThan(10_000);
      proxy.thaw();
      await until(async () => ((await ready()) === 200 ? true : undefined), 10_000, 100);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});

describe('a submission that never finished holds no budget for good', () => {
  it('gives the key its slot back once the lease lapses when Redis carried out a reservation but its answer was lost', async () => {
    const proxy = await startTcpProxy(redis.port);
    try {
      const t = await startTestApp({ env: sharedEnv({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, JOB_MAX_QUEUED_PER_KEY: '1', JOB_LOCK_MS: '1000' }) });
      apps.push(t);
      const ready = async () => ((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200 ? true : undefined);
      await until(ready, 10_000);
      const submit = () => t.app.inject({ method: 'POST', url: '/v2/predict/batch', headers: bearer(), payload: { mode: 'batch', conversations: [{ id: 'c', messages: messages(2) }] } });
      proxy.loseRepliesAfter('reserve: counts a submission');
      const lost = await submit();
      expect(lost.statusCode).toBe(503);
      await proxy.cut(100);
      await until(ready, 10_000, 100);
      // Redis counted the reservation: until its lease lapses (JOB_LOCK_MS, but at least 15 s, from
      // the reservation: about 10 s from now), the key is at its limit.
      expect((await submit()).statusCode).toBe(429);
      const accepted = await until(async () => {
        const res = await submit();
        return res.statusCode === 202 ? res : undefined;
      }, 30_000, 250);
      const url = accepted.json().poll_url as string;
      const job = await until(async () => {
        const j = (await t.app.inject({ method: 'GET', url, headers: bearer() })).json();
        return j.status === 'done' ? j : undefined;
      }, 30_000, 100);
      expect(job.progress).toEqual({ done: 1, total: 1 });
      // The lost submission counts nowhere any more: not in the key's slot, nor in the shared gauges.
      const metrics = await t.metrics.registry.metrics();
      expect(metrics).toMatch(/conversation_risk_jobs_queue_depth 0/);
      expect(metrics).toMatch(/conversation_risk_job_items_pending 0/);
    } finally {
      await proxy.close();
    }
  }, 90_000);
});

describe('a replica killed mid-job loses nothing', () => {
  const procs: ServerProcess[] = [];
  afterAll(() => {
    for (const p of procs) p.child.kill('SIGKILL');
  });

  it('finishes the job on the other replica with every result after kill -9 of the one running it, and every stored result has its audit line', async () => {
    const env = {
      ...sharedEnv({ JOB_LOCK_MS: '1000', API_KEYS: TEST_KEY, RATE_LIMIT_MAX: '10000', AUDIT_LOG: 'true' }),
      MODEL_DIR: 'test/fixtures/contract-model',
      LOG_LEVEL: 'info',
    };
    const a = await startServerProcess(env);
    procs.push(a);
    // Long conversations, so items are still running on A when it dies.
    const long = Array.from({ length: 3000 }, (_, i) => ({ user: i % 2 === 0 ? 'user1' : 'user2', text: `message ${i} about homework and games and music` }));
    const res = await fetch(`${a.url}/v2/predict/batch`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'batch', webhook_url: receiver.url('/killed'), conversations: Array.from({ length: 24 }, (_, i) => ({ id: `c${i}`, messages: long })) }),
    });
    expect(res.status).toBe(202);
    const pollUrl = ((await res.json()) as { poll_url: string }).poll_url;
    await until(async () => ((await pollJob(`${a.url}${pollUrl}`)).progress.done >= 2 ? true : undefined), 60_000);
    a.child.kill('SIGKILL');
    await a.exited;
    const b = await startServerProcess(env);
    procs.push(b);
    const job = await until(async () => {
      const j = await pollJob(`${b.url}${pollUrl}`);
      return j.status === 'done' || j.status === 'failed' ? j : undefined;
    }, 120_000);
    expect(job.status).toBe('done');
    expect(job.progress).toEqual({ done: 24, total: 24 });
    expect(Object.keys(job.results)).toHaveLength(24);
    // The audit line is written before the result is stored: none is lost with the killed replica.
    const audited = new Set(
      `${a.stdout()}\n${b.stdout()}`
        .split('\n')
        .filter((l) => l.includes('"log":"audit"'))
        .map((l) => (JSON.parse(l) as { audit: { job_item: number } }).audit.job_item),
    );
    expect([...audited].sort((x, y) => x - y)).toEqual(Array.from({ length: 24 }, (_, i) => i));
    await receiver.waitFor(1, 30_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.requests.filter((r) => r.path === '/killed')).toHaveLength(1);
    expect(b.stdout()).not.toContain(MARKER);
  }, 240_000);

  it('a webhook delivery taken over after kill -9 makes only the attempts the dead replica left', async () => {
    const env = {
      ...sharedEnv({ JOB_LOCK_MS: '1000', API_KEYS: TEST_KEY, RATE_LIMIT_MAX: '10000', WEBHOOK_MAX_ATTEMPTS: '3' }),
      MODEL_DIR: 'test/fixtures/contract-model',
      LOG_LEVEL: 'info',
    };
    // A's first attempt fails and is recorded; its second hangs at the receiver, so A is provably in
    // the middle of it (an attempt not yet recorded) when it is killed. B then owes 3 - 1 = 2 attempts.
    receiver.script({ status: 500 }, { status: 500, delayMs: 15_000 }, { status: 500 }, { status: 500 }, { status: 500 });
    const a = await startServerProcess(env);
    procs.push(a);
    const res = await fetch(`${a.url}/v2/predict/batch`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'batch', webhook_url: receiver.url('/takeover'), conversations: [{ id: 'c0', messages: messages(4) }] }),
    });
    expect(res.status).toBe(202);
    const pollUrl = ((await res.json()) as { poll_url: string }).poll_url;
    await receiver.waitFor(2, 30_000);
    a.child.kill('SIGKILL');
    await a.exited;
    expect(receiver.requests).toHaveLength(2);
    const b = await startServerProcess(env);
    procs.push(b);
    const job = await until(async () => {
      const j = await pollJob(`${b.url}${pollUrl}`);
      return j.webhook?.status === 'failed' ? j : undefined;
    }, 60_000);
    expect(job.webhook?.attempts).toBe(3);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.requests.filter((r) => r.path === '/takeover')).toHaveLength(4);
    expect(receiver.requests.every((r) => verifyStandardWebhook(SECRET, r))).toBe(true);
  }, 120_000);
});
