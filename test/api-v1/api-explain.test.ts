// Explanations over HTTP (v1 ?explain=true, v2 explain: true, jobs and webhooks), scored by the real
// engine running the contract fixture model: running scores, first alert, evidence, numbers only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, chat, startTestApp, type TestApp } from '../helpers/app.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const MARKER = 'MARKER-9d2e41-private-words';
const SECRET = 'whsec_' + Buffer.alloc(32, 9).toString('base64');

let t: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestApp({
    env: { RATE_LIMIT_MAX: '10000', WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOWED_HOSTS: receiver.hostPort, WEBHOOK_ALLOW_HTTP: 'true' },
  });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const post = (url: string, payload: unknown) => t.app.inject({ method: 'POST', url, payload: payload as object, headers: bearer() });
const messages = (n: number) =>
  chat(n)
    .split('\n')
    .map((line, i) => ({ user: (i % 2 === 0 ? 'user1' : 'user2') as 'user1' | 'user2', text: `${line.slice(7)} ${i === 3 ? MARKER : ''}`.trim() }));

interface Explanation {
  turn_scores: number[];
  turn_lines?: number[];
  first_alert_index: number | null;
  evidence: Array<{ index: number; user: string; weight: number; line?: number }>;
}

/** The rules every explanation obeys, whatever the model says. */
function expectWellFormed(e: Explanation, score: number, entries: number): void {
  expect(e.turn_scores).toHaveLength(entries);
  expect(e.turn_scores.at(-1)).toBe(score);
  const first = e.turn_scores.findIndex((s) => s > 0.5);
  expect(e.first_alert_index).toBe(first === -1 ? null : first);
  expect(e.evidence.length).toBeLessThanOrEqual(5);
  for (const [k, ev] of e.evidence.entries()) {
    expect(Number.isInteger(ev.index) && ev.index >= 0 && ev.index < entries).toBe(true);
    expect(ev.weight).toBeGreaterThan(0);
    const before = ev.index === 0 ? undefined : e.turn_scores[ev.index - 1]!;
    if (before !== undefined) expect(ev.weight).toBeCloseTo(e.turn_scores[ev.index]! - before, 12);
    if (k > 0) expect(ev.weight).toBeLessThanOrEqual(e.evidence[k - 1]!.weight);
  }
}

describe('v1: POST /predict?explain=true', () => {
  it('adds an explanation per turn, with the line where each turn starts, and changes nothing else', async () => {
    const conversation = 'user1: hi there\ncontinued line\nuser2: hello\n\nuser1: how was school\nuser2: fine';
    const plain = (await post('/predict', { conversation })).json();
    const res = await post('/predict?explain=true', { conversation });
    expect(res.statusCode).toBe(200);
    const { explanation, ...rest } = res.json();
    expect(rest).toEqual(plain);
    expectWellFormed(explanation, plain.harmful_score, 4);
    expect(explanation.turn_lines).toEqual([0, 2, 4, 5]);
    expect(explanation.evidence.length).toBeGreaterThan(0);
    for (const ev of explanation.evidence) expect(ev.line).toBe(explanation.turn_lines[ev.index]);
  });

  it('answers exactly the spec fields without the parameter or with explain=false', async () => {
    for (const url of ['/predict', '/predict?explain=false']) {
      const p = (await post(url, { conversation: chat(6) })).json();
      expect(p.explanation).toBeUndefined();
      expect(Object.keys(p)).toHaveLength(9);
    }
  });

  it('matches each turn score to the same turns scored alone (within 1e-4)', async () => {
    const conversation = chat(90);
    const { explanation } = (await post('/predict?explain=true', { conversation })).json();
    const lines = conversation.split('\n');
    const cuts = [1, 10, 64, 65, 90];
    for (const n of cuts) {
      const alone = (await post('/predict', { conversation: lines.slice(0, n).join('\n') })).json();
      expect(Math.abs(explanation.turn_scores[n - 1] - alone.harmful_score)).toBeLessThan(1e-4);
    }
    // The score moves across these turns, so one constant trace could not match them all.
    const atCuts = cuts.map((n) => explanation.turn_scores[n - 1] as number);
    expect(Math.max(...atCuts) - Math.min(...atCuts)).toBeGreaterThan(0.05);
  });

  it('explains every item of /batch_predict?explain=true and names flat-text authors unknown', async () => {
    const res = await post('/batch_predict?explain=true', { conversations: [chat(5), { conversation: 'hi\nhello\nhow are you' }] });
    expect(res.statusCode).toBe(200);
    const [a, b] = res.json().predictions;
    expectWellFormed(a.explanation, a.harmful_score, 5);
    expectWellFormed(b.explanation, b.harmful_score, 3);
    expect(b.explanation.turn_lines).toEqual([0, 1, 2]);
    expect(b.explanation.evidence.length).toBeGreaterThan(0);
    for (const ev of b.explanation.evidence) expect(ev.user).toBe('unknown');
  });

  it.each([
    ['/predict?explain=yes', /^query\.explain: must be equal to one of the allowed values/],
    ['/predict?explain=1', /^query\.explain: /],
    ['/predict?explian=true', /^query: unknown parameter "explian"$/],
    ['/batch_predict?foo=1', /^query: unknown parameter "foo"$/],
  ])('%s is a 422 naming the parameter as part of the query, not the body', async (url, detail) => {
    const res = await post(url, url.startsWith('/batch') ? { conversations: [chat(3)] } : { conversation: chat(3) });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(detail);
  });
});

describe('v2: explain: true on /v2/predict, on batch items, in job results and webhooks', () => {
  it('gives one turn score per message, an empty message keeping the score before it', async () => {
    const msgs = messages(6);
    msgs.splice(2, 0, { user: 'user1', text: '' });
    const res = await post('/v2/predict', { messages: msgs, explain: true });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expectWellFormed(body.explanation, body.harmfulness_score, 7);
    expect(body.explanation.turn_scores[2]).toBe(body.explanation.turn_scores[1]);
    expect(body.explanation.evidence.map((e: { index: number }) => e.index)).not.toContain(2);
    expect(body.explanation.evidence.length).toBeGreaterThan(0);
    for (const ev of body.explanation.evidence) expect(ev.user).toBe(msgs[ev.index]!.user);
    expect(JSON.stringify(body)).not.toContain(MARKER);
  });

  it('matches a prefix of the messages scored alone (within 1e-4) and leaves plain calls unchanged', async () => {
    const msgs = messages(20);
    const { explanation } = (await post('/v2/predict', { messages: msgs, explain: true })).json();
    const cuts = [1, 7, 20];
    for (const n of cuts) {
      const alone = (await post('/v2/predict', { messages: msgs.slice(0, n) })).json();
      expect(alone.explanation).toBeUndefined();
      expect(Math.abs(explanation.turn_scores[n - 1] - alone.harmfulness_score)).toBeLessThan(1e-4);
    }
    const atCuts = cuts.map((n) => explanation.turn_scores[n - 1] as number);
    expect(Math.max(...atCuts) - Math.min(...atCuts)).toBeGreaterThan(0.05);
  });

  it('carries the explanation of explained items into the job result and the webhook, and no text', async () => {
    const res = await post('/v2/predict/batch', {
      mode: 'batch',
      webhook_url: receiver.url('/hook'),
      conversations: [
        { id: 'a', messages: messages(8), explain: true },
        { id: 'b', messages: messages(4) },
      ],
    });
    expect(res.statusCode).toBe(202);
    const [hook] = await receiver.waitFor(1, 20_000);
    const job = (await t.app.inject({ method: 'GET', url: res.json().poll_url, headers: bearer() })).json();
    expect(job.status).toBe('done');
    expectWellFormed(job.results.a.explanation, job.results.a.harmfulness_score, 8);
    expect(job.results.b.explanation).toBeUndefined();
    const payload = JSON.parse(hook!.body);
    expect(JSON.stringify(payload)).toContain('turn_scores');
    expect(hook!.body).not.toContain(MARKER);
    expect(JSON.stringify(job)).not.toContain(MARKER);
  });

  it('rejects a non-boolean explain with a 422', async () => {
    const res = await post('/v2/predict', { messages: messages(2), explain: 'true' });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/explain/);
  });
});

describe('metrics: explained conversations and the message index of first alerts', () => {
  it('counts every explained conversation and observes first alerts only where one happened', async () => {
    const read = async () => {
      const text = await t.metrics.registry.metrics();
      const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
      return { explained: value('conversation_risk_explained_conversations_total'), alerts: value('conversation_risk_first_alert_message_index_count') };
    };
    const before = await read();
    // With the fixture model, chat(9, 1) crosses 0.5 at its sixth turn and chat(4) never does: one
    // alert observed, not two and not none.
    const res = await post('/batch_predict?explain=true', { conversations: [chat(4), chat(9, 1)] });
    const alerted = res.json().predictions.filter((p: { explanation: Explanation }) => p.explanation.first_alert_index !== null).length;
    expect(alerted).toBe(1);
    await post('/predict', { conversation: chat(4) });
    const after = await read();
    expect(after.explained - before.explained).toBe(2);
    expect(after.alerts - before.alerts).toBe(alerted);
  });
});
