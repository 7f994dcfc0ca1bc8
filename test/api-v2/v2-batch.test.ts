// POST /v2/predict/batch and GET /v2/predict/batch/:job_id (Preview): asynchronous jobs scored by
// the real engine, polled and delivered to a real webhook receiver, signatures checked independently.
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { messagesToConversation, type Message } from '../../src/routes/v2/messages.ts';
import type { EngineScorer } from '../../src/scoring/scorer.ts';
import { bearer, captureLogs, OTHER_KEY, startTestApp, type TestApp } from '../helpers/app.ts';
import { startReceiver, verifyStandardWebhook, type Receiver } from '../helpers/webhook-receiver.ts';

const SECRET = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
const MARKER = 'MARKER-6c1f0e-private-words';

let receiver: Receiver;
let shared: TestApp;
let scorer: EngineScorer;
const apps: TestApp[] = [];

/** Another app on the same scorer (or the one given) with these settings; closed after each test. */
async function app(env: Record<string, string> = {}, on: EngineScorer = scorer): Promise<TestApp> {
  const t = await startTestApp({
    scorer: on,
    env: {
      RATE_LIMIT_MAX: '10000',
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_ALLOWED_HOSTS: receiver.hostPort,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_RETRY_BASE_MS: '20',
      WEBHOOK_MAX_ATTEMPTS: '3',
      ...env,
    },
  });
  apps.push(t);
  return t;
}

beforeAll(async () => {
  receiver = await startReceiver();
  shared = await startTestApp({ env: { WORKERS: '1' } });
  scorer = shared.scorer;
});
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
  receiver.requests.length = 0;
  receiver.script();
});
afterAll(async () => {
  await shared.close();
  await receiver.close();
});

const lines = ['hi, how was your day', 'good, we had a quiz', `${MARKER} do not leak me`, 'see you tomorrow'];
const messages = (turns: number, seed = 0) =>
  Array.from({ length: turns }, (_, i) => ({ user: i % 2 === 0 ? 'user1' : 'user2', text: lines[(i + seed) % lines.length] as string }));
const conversations = (n: number, turns = 6) => Array.from({ length: n }, (_, i) => ({ id: `conv-${i}`, messages: messages(turns, i) }));

/**
 * The shared scorer with every score() call held until release(): what a job holds for scoring stays
 * queued while the test submits against it, however fast or loaded the machine is.
 */
function heldScorer(): { scorer: EngineScorer; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const held = new Proxy(scorer, {
    get(target, prop) {
      if (prop === 'score') {
        return async (...args: Parameters<EngineScorer['score']>) => {
          await gate;
          return target.score(...args);
        };
      }
      // The receiver is the scorer itself: its getters and methods read its private fields.
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { scorer: held, release };
}

const submit = (t: TestApp, body: unknown, key?: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/v2/predict/batch', payload: body as object, headers: { ...bearer(key), ...headers } });
const poll = (t: TestApp, url: string, key?: string) => t.app.inject({ method: 'GET', url, headers: bearer(key) });

async function until(t: TestApp, url: string, done: (job: { status: string }) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = (await poll(t, url)).json();
    if (done(job)) return job;
    if (Date.now() > deadline) throw new Error(`job still ${job.status}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
const finished = (job: { status: string }) => job.status === 'done' || job.status === 'failed';

describe('a batch job goes queued -> running -> done and is polled by its creator', () => {
  it('answers 202 with job_id, status queued, poll_url and a matching Location header', async () => {
    const t = await app();
    const res = await submit(t, { mode: 'batch', conversations: conversations(3) });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body.status).toBe('queued');
    expect(body.job_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body.poll_url).toBe(`/v2/predict/batch/${body.job_id}`);
    expect(res.headers.location).toBe(body.poll_url);
    await until(t, body.poll_url, finished);
  });

  it('shows running with progress, then done with results keyed by id equal to /v2/predict', async () => {
    const t = await app();
    const convs = conversations(200, 20);
    const { poll_url } = (await submit(t, { mode: 'batch', conversations: convs })).json();
    const first = (await poll(t, poll_url)).json();
    expect(first.status).toBe('running');
    expect(first.progress.total).toBe(200);
    expect(first.progress.done).toBeLessThan(200);
    expect(first.results).toBeUndefined();
    const job = await until(t, poll_url, finished);
    expect(job.status).toBe('done');
    expect(job.progress).toEqual({ done: 200, total: 200 });
    expect(Object.keys(job.results)).toEqual(convs.map((c) => c.id));
    expect(Date.parse(job.completed_at)).toBeGreaterThanOrEqual(Date.parse(job.created_at));
    const live = (await t.app.inject({ method: 'POST', url: '/v2/predict', headers: bearer(), payload: { messages: convs[7]!.messages } })).json();
    const { latency_ms: _latency, ...scores } = live;
    // Same labels and flags; scores equal up to float32 noise from padding in a shared ONNX batch
    // (docs/model-contract.md allows 1e-4).
    const fromJob = job.results['conv-7'];
    expect(Object.keys(fromJob).sort()).toEqual(Object.keys(scores).sort());
    for (const [field, value] of Object.entries(scores)) {
      if (typeof value === 'number') expect(fromJob[field]).toBeCloseTo(value, 4);
      else if (field === 'user_probabilities') {
        for (const [who, p] of Object.entries(value as Record<string, number>)) expect(fromJob[field][who]).toBeCloseTo(p, 4);
      } else expect(fromJob[field]).toEqual(value);
    }
    expect(JSON.stringify(job)).not.toContain(MARKER);
  });

  it('runs one key\'s jobs in order: a second job waits queued while the first runs', async () => {
    const t = await app();
    const a = (await submit(t, { mode: 'batch', conversations: conversations(30, 20) })).json();
    const b = (await submit(t, { mode: 'batch', conversations: conversations(1) })).json();
    expect((await poll(t, b.poll_url)).json().status).toBe('queued');
    await until(t, b.poll_url, finished);
    expect((await poll(t, a.poll_url)).json().status).toBe('done');
  });

  it('another key, an unknown id and a malformed id all answer the same 404', async () => {
    const t = await app();
    const { poll_url } = (await submit(t, { mode: 'batch', conversations: conversations(2) })).json();
    await until(t, poll_url, finished);
    const other = await poll(t, poll_url, OTHER_KEY);
    const unknown = await poll(t, `/v2/predict/batch/${crypto.randomUUID()}`);
    const junk = await poll(t, '/v2/predict/batch/..%2F..%2Fetc');
    for (const res of [other, unknown, junk]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(other.json());
    }
    expect((await poll(t, poll_url)).statusCode).toBe(200);
  });

  it('forgets results JOB_RESULT_TTL_MS after completion: then 404', async () => {
    const t = await app({ JOB_RESULT_TTL_MS: '300' });
    const { poll_url } = (await submit(t, { mode: 'batch', conversations: conversations(2) })).json();
    const job = await until(t, poll_url, finished);
    expect(job.expires_at).toBeDefined();
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(job.expires_at) - Date.now()) + 50));
    expect((await poll(t, poll_url)).statusCode).toBe(404);
  });

  it('keeps any id as a plain result key, __proto__ and constructor included', async () => {
    const t = await app();
    const ids = ['__proto__', 'constructor', '10', '2', 'ünïcødé id'];
    const { poll_url } = (await submit(t, { mode: 'batch', conversations: ids.map((id) => ({ id, messages: messages(4) })) })).json();
    const job = await until(t, poll_url, finished);
    expect(job.status).toBe('done');
    expect(Object.keys(job.results).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(job.results[id].risk_level).toBeTypeOf('string');
  });

  it('an Idempotency-Key replays the same job; reused with another body it is a 422', async () => {
    const t = await app();
    const body = { mode: 'batch', conversations: conversations(2) };
    const first = await submit(t, body, undefined, { 'idempotency-key': 'abc-1' });
    const again = await submit(t, body, undefined, { 'idempotency-key': 'abc-1' });
    expect(again.statusCode).toBe(202);
    expect(again.json().job_id).toBe(first.json().job_id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await submit(t, { ...body, conversations: conversations(3) }, undefined, { 'idempotency-key': 'abc-1' });
    expect(other.statusCode).toBe(422);
    expect(other.json().detail).toMatch(/Idempotency-Key/);
    // Keys are per API key: the other key's same header is a new job.
    const otherKey = await submit(t, body, OTHER_KEY, { 'idempotency-key': 'abc-1' });
    expect(otherKey.json().job_id).not.toBe(first.json().job_id);
  });
});

describe('submission rules answer a clear 4xx with detail', () => {
  it.each([
    ['a mode other than batch', { mode: 'stream', conversations: conversations(1) }, /mode: must be "batch"/],
    ['no mode', { conversations: conversations(1) }, /mode: is required/],
    ['no conversations', { mode: 'batch' }, /conversations: is required/],
    ['an empty conversations array', { mode: 'batch', conversations: [] }, /conversations: must hold at least 1/],
    ['an item without id', { mode: 'batch', conversations: [{ messages: messages(2) }] }, /conversations\[0\]\.id: is required/],
    ['an empty id', { mode: 'batch', conversations: [{ id: '', messages: messages(2) }] }, /conversations\[0\]\.id: must not be empty/],
    [
      'a duplicate id',
      { mode: 'batch', conversations: [{ id: 'a', messages: messages(2) }, { id: 'b', messages: messages(2) }, { id: 'a', messages: messages(2) }] },
      /conversations\[2\]\.id: duplicate id "a"/,
    ],
    [
      'an invalid age in an item',
      { mode: 'batch', conversations: [{ id: 'a', messages: messages(2) }, { id: 'b', messages: messages(2), age_b: 'old' }] },
      /conversations\[1\]\.age_b must be/,
    ],
    [
      'an item whose text is empty',
      { mode: 'batch', conversations: [{ id: 'a', messages: [{ user: 'user1', text: '' }] }] },
      /conversations\[0\]\.messages: text must total 1/,
    ],
    ['a webhook_url that is not a URL', { mode: 'batch', conversations: conversations(1), webhook_url: 'hook' }, /absolute URL/],
    [
      'a webhook_url with credentials',
      { mode: 'batch', conversations: conversations(1), webhook_url: 'http://u:p@127.0.0.1/' },
      /credentials/,
    ],
  ])('%s is a 422', async (_name, body, detail) => {
    const t = await app();
    const res = await submit(t, body);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(detail);
  });

  it('a query parameter is a 422 naming it: a job takes everything from its body', async () => {
    const t = await app();
    const res = await t.app.inject({
      method: 'POST', url: '/v2/predict/batch?explain=true', payload: { mode: 'batch', conversations: conversations(1) }, headers: bearer(),
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toBe('query: unknown parameter "explain"');
  });

  it('a webhook_url whose host:port is not allow-listed is a 422', async () => {
    const t = await app();
    const res = await submit(t, { mode: 'batch', conversations: conversations(1), webhook_url: 'http://127.0.0.2:9/x' });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toBe('webhook_url host 127.0.0.2:9 is not in WEBHOOK_ALLOWED_HOSTS');
    // Same host, another port: still not allowed.
    const port = Number(receiver.hostPort.split(':')[1]);
    const other = await submit(t, { mode: 'batch', conversations: conversations(1), webhook_url: `http://127.0.0.1:${port + 1}/` });
    expect(other.statusCode).toBe(422);
  });

  it('a plain http webhook_url is a 422 unless WEBHOOK_ALLOW_HTTP=true', async () => {
    const t = await app({ WEBHOOK_ALLOW_HTTP: 'false' });
    const res = await submit(t, { mode: 'batch', conversations: conversations(1), webhook_url: receiver.url() });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/must use https/);
  });

  it('a webhook_url without WEBHOOK_SECRET configured is a 422: it could not be signed', async () => {
    const t = await startTestApp({ scorer, env: { WEBHOOK_ALLOWED_HOSTS: receiver.hostPort, WEBHOOK_ALLOW_HTTP: 'true' } });
    apps.push(t);
    const res = await submit(t, { mode: 'batch', conversations: conversations(1), webhook_url: receiver.url() });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/WEBHOOK_SECRET/);
    // Without a webhook the job is accepted: polling works unsigned.
    expect((await submit(t, { mode: 'batch', conversations: conversations(1) })).statusCode).toBe(202);
  });

  it('more than JOB_MAX_ITEMS conversations is a 422', async () => {
    const t = await app({ JOB_MAX_ITEMS: '3' });
    expect((await submit(t, { mode: 'batch', conversations: conversations(3) })).statusCode).toBe(202);
    const res = await submit(t, { mode: 'batch', conversations: conversations(4) });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/conversations: must hold at most 3 items/);
  });

  it('more than JOB_MAX_QUEUED_PER_KEY unfinished jobs of one key is a 429 with Retry-After; other keys are not affected', async () => {
    const hold = heldScorer();
    const t = await app({ JOB_MAX_QUEUED_PER_KEY: '1' }, hold.scorer);
    const first = (await submit(t, { mode: 'batch', conversations: conversations(40, 20) })).json();
    const res = await submit(t, { mode: 'batch', conversations: conversations(1) });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json().detail).toMatch(/JOB_MAX_QUEUED_PER_KEY/);
    expect((await submit(t, { mode: 'batch', conversations: conversations(1) }, OTHER_KEY)).statusCode).toBe(202);
    hold.release();
    await until(t, first.poll_url, finished);
    expect((await submit(t, { mode: 'batch', conversations: conversations(1) })).statusCode).toBe(202);
  });

  it('JOB_MAX_QUEUED_CHARS: a job larger than it is a 413, a full queue is a 503 with Retry-After', async () => {
    // The budget counts the text held for scoring: each message as a `userN: text` line.
    const held = (convs: ReturnType<typeof conversations>) =>
      convs.reduce((n, c) => n + messagesToConversation(c.messages as Message[]).length, 0);
    const big = conversations(40, 40);
    const small = conversations(10, 40).map((c) => ({ ...c, id: `small-${c.id}` }));
    const limit = held(big) + Math.floor(held(small) / 2);
    const hold = heldScorer();
    const t = await app({ JOB_MAX_QUEUED_CHARS: String(limit) }, hold.scorer);
    const tooLarge = await submit(t, { mode: 'batch', conversations: [...big, ...small] });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json().detail).toMatch(/JOB_MAX_QUEUED_CHARS/);
    const first = await submit(t, { mode: 'batch', conversations: big });
    expect(first.statusCode).toBe(202);
    // The first job is still queued (its scoring is held), so the second does not fit.
    const full = await submit(t, { mode: 'batch', conversations: small }, OTHER_KEY);
    expect(full.statusCode).toBe(503);
    expect(full.headers['retry-after']).toBe('5');
    expect(full.json().detail).toMatch(/queue is full/);
    hold.release();
    await until(t, first.json().poll_url, finished);
    expect((await submit(t, { mode: 'batch', conversations: small }, OTHER_KEY)).statusCode).toBe(202);
  });
});

describe('webhooks are delivered per Standard Webhooks', () => {
  it('a finished job POSTs batch.completed, signed, with the results and never the conversation text', async () => {
    const t = await app();
    const convs = conversations(5);
    const { job_id, poll_url } = (await submit(t, { mode: 'batch', conversations: convs, webhook_url: receiver.url('/hook?token=s3cret') })).json();
    const [req] = await receiver.waitFor(1);
    expect(req!.path).toBe('/hook?token=s3cret');
    expect(verifyStandardWebhook(SECRET, req!)).toBe(true);
    // One message per job, its id the job's: a resend (a retry, a takeover, a delivery queued again) keeps it.
    expect(req!.headers['webhook-id']).toBe(`msg_${job_id}`);
    expect(Math.abs(Number(req!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    const payload = JSON.parse(req!.body);
    expect(payload.type).toBe('batch.completed');
    expect(Number.isNaN(Date.parse(payload.timestamp))).toBe(false);
    expect(payload.data.job_id).toBe(job_id);
    expect(payload.data.status).toBe('done');
    expect(req!.body).not.toContain(MARKER);
    expect(req!.body).not.toContain('quiz');
    const job = await until(t, poll_url, (j) => (j as { webhook?: { status: string } }).webhook?.status === 'delivered');
    expect(payload.data.results).toEqual(job.results);
    expect(job.webhook).toEqual({ status: 'delivered', attempts: 1 });
    const metrics = await t.metrics.registry.metrics();
    expect(metrics).toMatch(/conversation_risk_jobs_total\{status="done"\} 1/);
    expect(metrics).toMatch(/conversation_risk_webhook_deliveries_total\{outcome="delivered"\} 1/);
    expect(metrics).toMatch(/conversation_risk_webhook_delivery_duration_seconds_count\{result="success"\} 1/);
    expect(metrics).toMatch(/conversation_risk_jobs_queue_depth 0/);
  });

  it('retries after a 503 with the same webhook-id and a valid signature each time', async () => {
    const t = await app();
    receiver.script({ status: 503 });
    const { poll_url } = (await submit(t, { mode: 'batch', conversations: conversations(2), webhook_url: receiver.url() })).json();
    const reqs = await receiver.waitFor(2);
    expect(reqs[0]!.headers['webhook-id']).toBe(reqs[1]!.headers['webhook-id']);
    expect(reqs[0]!.body).toBe(reqs[1]!.body);
    for (const r of reqs) expect(verifyStandardWebhook(SECRET, r)).toBe(true);
    const job = await until(t, poll_url, (j) => (j as { webhook?: { status: string } }).webhook?.status === 'delivered');
    expect(job.webhook).toEqual({ status: 'delivered', attempts: 2 });
  });

  it('gives up after WEBHOOK_MAX_ATTEMPTS and shows the failure on the job; results stay pollable', async () => {
    const t = await app();
    receiver.script({ status: 500 }, { status: 502 }, { status: 500 }, { status: 500 });
    const { poll_url } = (await submit(t, { mode: 'batch', conversations: conversations(2), webhook_url: receiver.url() })).json();
    const job = await until(t, poll_url, (j) => (j as { webhook?: { status: string } }).webhook?.status === 'failed');
    expect(job.webhook).toEqual({ status: 'failed', attempts: 3, last_error: 'HTTP 500' });
    expect(receiver.requests).toHaveLength(3);
    expect(job.status).toBe('done');
    expect(Object.keys(job.results)).toHaveLength(2);
    expect(await t.metrics.registry.metrics()).toMatch(/conversation_risk_webhook_deliveries_total\{outcome="failed"\} 1/);
  });

  it('does not follow a redirect from the receiver', async () => {
    const t = await app({ WEBHOOK_MAX_ATTEMPTS: '2' });
    const redirect = { status: 302, headers: { location: receiver.url('/stolen') } };
    receiver.script(redirect, redirect);
    const { poll_url } = (await submit(t, { mode: 'batch', conversations: conversations(1), webhook_url: receiver.url() })).json();
    const job = await until(t, poll_url, (j) => (j as { webhook?: { status: string } }).webhook?.status === 'failed');
    expect(job.webhook).toMatchObject({ status: 'failed', attempts: 2, last_error: 'HTTP 302' });
    expect(receiver.requests.map((r) => r.path)).toEqual(['/hook', '/hook']);
  });
});

describe('logs', () => {
  it('carry no conversation text, caller ids, webhook path or key, with audit on; audit lines hash each conversation', async () => {
    const { logger, lines } = captureLogs('trace');
    const t = await startTestApp({
      scorer,
      logger,
      env: { RATE_LIMIT_MAX: '10000', AUDIT_LOG: 'true', WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOWED_HOSTS: receiver.hostPort, WEBHOOK_ALLOW_HTTP: 'true' },
    });
    apps.push(t);
    receiver.script({ status: 500 });
    const convs = [0, 1, 2].map((i) => ({ id: `ID-MARKER-3b9e-${i}`, messages: messages(4, i) }));
    const { poll_url, job_id } = (await submit(t, { mode: 'batch', conversations: convs, webhook_url: receiver.url('/PATH-MARKER?token=TOKEN-MARKER') })).json();
    await until(t, poll_url, (j) => (j as { webhook?: { status: string } }).webhook?.status === 'delivered');
    await t.app.inject({ method: 'POST', url: '/v2/predict', headers: bearer(), payload: { messages: messages(4) } });
    const all = lines.join('\n');
    for (const secret of [MARKER, 'quiz', 'ID-MARKER', 'PATH-MARKER', 'TOKEN-MARKER', SECRET.slice(6)]) expect(all).not.toContain(secret);
    const audits = lines.filter((l) => l.includes('"log":"audit"')).map((l) => JSON.parse(l).audit as Record<string, unknown>);
    expect(audits).toHaveLength(4);
    // A job's line also says which job and position it answers (an item that runs again repeats them); a live call's does not.
    const v1Keys = ['conversation_sha256', 'harmful_score', 'latency_ms', 'model_version', 'predatory_user', 'risk_level'];
    const jobLines = audits.filter((a) => a.job_id !== undefined);
    expect(jobLines).toHaveLength(3);
    for (const a of jobLines) expect(Object.keys(a).sort()).toEqual([...v1Keys, 'job_id', 'job_item'].sort());
    expect(jobLines.map((a) => [a.job_item, a.job_id, a.conversation_sha256]).sort()).toEqual(
      [0, 1, 2].map((i) => [i, job_id, createHash('sha256').update(messagesToConversation(messages(4, i) as Message[])).digest('hex')]),
    );
    expect(Object.keys(audits.find((a) => a.job_id === undefined) ?? {}).sort()).toEqual(v1Keys);
    expect(all).toContain('webhook delivered');
  });
});

describe('shutdown', () => {
  it('closing the app finishes a running job and delivers its webhook before close resolves', async () => {
    const t = await app({ SHUTDOWN_GRACE_MS: '20000' });
    receiver.script({ status: 503 });
    const { job_id } = (await submit(t, { mode: 'batch', conversations: conversations(40, 20), webhook_url: receiver.url() })).json();
    await t.close();
    const delivered = receiver.requests.filter((r) => r.headers['webhook-id'] === receiver.requests[0]?.headers['webhook-id']);
    expect(delivered).toHaveLength(2);
    const payload = JSON.parse(delivered[1]!.body);
    expect(payload.data.job_id).toBe(job_id);
    expect(payload.data.status).toBe('done');
    expect(Object.keys(payload.data.results)).toHaveLength(40);
  });

  it('a job that cannot finish within the grace period does not hold the shutdown past it, and is reported failed', async () => {
    // 1 s of grace: 0.8 of it for jobs, 0.6 of that for scoring (far too little for 5,000 chats), the
    // rest for the webhook, enough for it even while the rest of the suite loads both cores.
    const t = await app({ SHUTDOWN_GRACE_MS: '1000', JOB_MAX_ITEMS: '5000' });
    expect((await submit(t, { mode: 'batch', conversations: conversations(5000, 60), webhook_url: receiver.url() })).statusCode).toBe(202);
    const started = Date.now();
    await t.close();
    expect(Date.now() - started).toBeLessThan(2000);
    // Part of the grace period is kept for it: the receiver learns the job failed, with what was scored.
    expect(receiver.requests).toHaveLength(1);
    const payload = JSON.parse(receiver.requests[0]!.body);
    expect(payload.type).toBe('batch.failed');
    expect(Object.keys(payload.data.results)).toHaveLength(payload.data.progress.done);
  });
});
