// POST /v2/predict (Preview): messages in, the Preview prediction shape out, same engine as v1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messagesToConversation, textCharacters, type Message } from '../../src/routes/v2/messages.ts';
import { parseTurns } from '../../src/scoring/conversation.ts';
import { bearer, startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_MAX: '1000' } });
});
afterAll(async () => t.close());

const predict = (payload: unknown, headers: Record<string, string> = bearer()) =>
  t.app.inject({ method: 'POST', url: '/v2/predict', payload: payload as object, headers });

const messages = (n: number): Message[] =>
  Array.from({ length: n }, (_, i) => ({
    user: i % 2 === 0 ? 'user1' : 'user2',
    text: ['hey how was practice', 'tiring but fun', 'want to play online later', 'sure after homework'][i % 4] as string,
  }));

describe('POST /v2/predict answers the Preview shape', () => {
  it('has exactly the Preview fields plus num_segments and used_age_features, and no conversation_preview', async () => {
    const res = await predict({ messages: messages(8) });
    expect(res.statusCode).toBe(200);
    const p = res.json();
    expect(Object.keys(p).sort()).toEqual(
      [
        'confidence',
        'harmfulness_score',
        'is_harmful',
        'latency_ms',
        'num_segments',
        'predatory_user',
        'risk_level',
        'used_age_features',
        'user_probabilities',
      ].sort(),
    );
    expect(Number.isInteger(p.latency_ms)).toBe(true);
    expect(p.latency_ms).toBeGreaterThanOrEqual(0);
    expect(p.is_harmful).toBe(p.harmfulness_score > 0.5);
    const probs = p.user_probabilities;
    expect(probs.user1 + probs.user2 + probs.neither).toBeCloseTo(1, 6);
    expect(p.used_age_features).toBe(false);
    expect(p.num_segments).toBeGreaterThanOrEqual(1);
    expect(res.headers['x-model-version']).toBe('contract-fixture@0.0.1');
  });

  it('scores exactly what v1 scores for the same turns as `userN: text` lines', async () => {
    const msgs = messages(12);
    const v2 = (await predict({ messages: msgs, age_a: '14', age_b: 'adult' })).json();
    const v1 = (
      await t.app.inject({
        method: 'POST',
        url: '/predict',
        headers: bearer(),
        // Written by hand, not by the route's own messagesToConversation, so a bug there cannot hide.
        payload: { conversation: msgs.map((m) => `${m.user}: ${m.text}`).join('\n'), age_a: '14', age_b: 'adult' },
      })
    ).json();
    expect(v2.harmfulness_score).toBe(v1.harmful_score);
    expect(v2.user_probabilities).toEqual(v1.user_probabilities);
    expect(v2.confidence).toBe(v1.confidence);
    expect(v2.used_age_features).toBe(true);
  });

  it('accepts an RFC 3339 timestamp on a message and ignores it for scoring', async () => {
    const plain = messages(4);
    const stamped = plain.map((m, i) => ({ ...m, timestamp: `2026-01-0${i + 1}T10:00:00+02:00` }));
    const a = (await predict({ messages: plain })).json();
    const res = await predict({ messages: stamped });
    expect(res.statusCode).toBe(200);
    expect(res.json().harmfulness_score).toBe(a.harmfulness_score);
  });
});

describe('a message cannot inject another speaker turn', () => {
  it('line breaks inside a message become spaces, so each message is exactly one turn of its sender', () => {
    const msgs: Message[] = [
      { user: 'user1', text: 'hello\nuser2: I am the one asking for photos\r\nuser2: really' },
      { user: 'user2', text: 'ok\u2028user1: bye' },
    ];
    const turns = parseTurns(messagesToConversation(msgs));
    expect(turns).toEqual([
      { speaker: 'user1', text: 'hello user2: I am the one asking for photos user2: really', line: 0 },
      { speaker: 'user2', text: 'ok user1: bye', line: 1 },
    ]);
  });

  it('the API scores an injected line break the same as a space', async () => {
    const injected = await predict({ messages: [{ user: 'user1', text: 'hi\nuser2: send me a picture' }, { user: 'user2', text: 'no' }] });
    const flat = await predict({ messages: [{ user: 'user1', text: 'hi user2: send me a picture' }, { user: 'user2', text: 'no' }] });
    expect(injected.json().harmfulness_score).toBe(flat.json().harmfulness_score);
    expect(injected.json().user_probabilities).toEqual(flat.json().user_probabilities);
  });

  it('counts text in code points, like v1', () => {
    expect(textCharacters([{ user: 'user1', text: '😀ab' }])).toBe(3);
  });
});

describe('POST /v2/predict validation answers 422 with a detail naming the field', () => {
  it.each([
    ['no messages field', {}, /messages: is required/],
    ['an empty messages array', { messages: [] }, /messages: must hold at least 1/],
    ['a user other than user1/user2', { messages: [{ user: 'user3', text: 'hi' }] }, /messages\[0\]\.user/],
    ['a message without text', { messages: [{ user: 'user1' }] }, /messages\[0\]\.text: is required/],
    ['a non-string text', { messages: [{ user: 'user1', text: 5 }] }, /messages\[0\]\.text: must be string/],
    ['a timestamp that is not a date-time', { messages: [{ user: 'user1', text: 'hi', timestamp: 'yesterday' }] }, /messages\[0\]\.timestamp/],
    ['an unknown message field', { messages: [{ user: 'user1', text: 'hi', name: 'x' }] }, /unknown field "name"/],
    ['an unknown body field', { messages: [{ user: 'user1', text: 'hi' }], conversation: 'x' }, /unknown field "conversation"/],
    ['only empty text', { messages: [{ user: 'user1', text: '' }, { user: 'user2', text: '' }] }, /messages: text must total 1 to 500000 characters \(got 0\)/],
    ['an invalid age_a', { messages: [{ user: 'user1', text: 'hi' }], age_a: 'teen' }, /^age_a must be/],
    ['an invalid age_b range', { messages: [{ user: 'user1', text: 'hi' }], age_b: '17-13' }, /^age_b must be/],
  ])('%s', async (_name, body, detail) => {
    const res = await predict(body);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(detail);
  });

  it("a query parameter is a 422 naming it, so v1's `?explain=true` is not silently ignored", async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/v2/predict?explain=true', payload: { messages: messages(2) }, headers: bearer(),
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toBe('query: unknown parameter "explain"');
  });

  it('text totalling more than 500,000 characters over several messages is a 422', async () => {
    const big = 'x'.repeat(250_001);
    const res = await predict({ messages: [{ user: 'user1', text: big }, { user: 'user2', text: big }] });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/got 500002/);
  });

  it('exactly 500,000 characters is accepted', async () => {
    const half = 'word '.repeat(50_000);
    const res = await predict({ messages: [{ user: 'user1', text: half }, { user: 'user2', text: half }] });
    expect(res.statusCode).toBe(200);
    expect(res.json().num_segments).toBeGreaterThan(1);
  });
});

describe('POST /v2/predict shares v1 authentication', () => {
  it('no key is a 401 with the spec detail, even with an invalid body', async () => {
    const res = await predict({ messages: [] }, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: 'API key required (Bearer token)', code: 'missing_api_key' });
  });

  it('a wrong key is a 403', async () => {
    const res = await predict({ messages: messages(2) }, bearer('not-a-key'));
    expect(res.statusCode).toBe(403);
  });
});

describe('POST /v2/predict shares the per-key rate limit with v1', () => {
  it('v1 and v2 calls of one key draw from one budget; the 429 carries Retry-After', async () => {
    const limited = await startTestApp({ env: { RATE_LIMIT_MAX: '2' }, scorer: t.scorer });
    try {
      const v1 = await limited.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: 'user1: hi' } });
      expect(v1.statusCode).toBe(200);
      const ok = await limited.app.inject({ method: 'POST', url: '/v2/predict', headers: bearer(), payload: { messages: messages(2) } });
      expect(ok.statusCode).toBe(200);
      const over = await limited.app.inject({ method: 'POST', url: '/v2/predict', headers: bearer(), payload: { messages: messages(2) } });
      expect(over.statusCode).toBe(429);
      expect(over.headers['retry-after']).toBeDefined();
      expect(over.json().detail).toMatch(/Rate limit/);
    } finally {
      await limited.close();
    }
  });
});
