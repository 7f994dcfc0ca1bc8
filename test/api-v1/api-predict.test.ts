// POST /predict over inject, scored by the real engine running the contract fixture model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, chat, startTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

const predict = (payload: unknown, headers: Record<string, string> = bearer()) =>
  t.app.inject({ method: 'POST', url: '/predict', payload: payload as object, headers });

const BANDS: Array<[number, string]> = [
  [0.2, 'Safe'],
  [0.4, 'Low Risk'],
  [0.6, 'Medium Risk'],
  [0.8, 'High Risk'],
  [Infinity, 'Critical'],
];
const bandOf = (score: number) => (BANDS.find(([edge]) => score < edge) as [number, string])[1];

describe('POST /predict', () => {
  it('answers every Prediction field with the spec types and invariants', async () => {
    const res = await predict({ conversation: chat(12) });
    expect(res.statusCode).toBe(200);
    const p = res.json();
    expect(Object.keys(p).sort()).toEqual(
      [
        'confidence',
        'conversation_preview',
        'harmful_score',
        'is_harmful',
        'num_segments',
        'predatory_user',
        'risk_level',
        'used_age_features',
        'user_probabilities',
      ].sort(),
    );
    expect(p.harmful_score).toBeGreaterThanOrEqual(0);
    expect(p.harmful_score).toBeLessThanOrEqual(1);
    expect(p.is_harmful).toBe(p.harmful_score > 0.5);
    expect(p.risk_level).toBe(bandOf(p.harmful_score));
    const probs = p.user_probabilities as Record<'user1' | 'user2' | 'neither', number>;
    expect(probs.user1 + probs.user2 + probs.neither).toBeCloseTo(1, 6);
    const largest = Math.max(probs.user1, probs.user2, probs.neither);
    expect(probs[p.predatory_user as 'user1']).toBe(largest);
    expect(p.confidence).toBeGreaterThanOrEqual(0);
    expect(p.confidence).toBeLessThanOrEqual(1);
    expect(p.num_segments).toBe(1);
    expect(p.used_age_features).toBe(false);
  });

  it('stamps the model name and version on the answer', async () => {
    const res = await predict({ conversation: chat(4) });
    const m = t.scorer.manifest;
    expect(m).toBeDefined();
    expect(res.headers['x-model-version']).toBe(`${m?.name}@${m?.version}`);
    expect(res.headers['x-model-name']).toBe(m?.name);
  });

  it('previews the first 500 code points without splitting a surrogate pair', async () => {
    const conversation = `user1: ${'😀'.repeat(600)}`;
    const p = (await predict({ conversation })).json();
    expect([...p.conversation_preview].length).toBe(500);
    expect(p.conversation_preview).toBe([...conversation].slice(0, 500).join(''));
  });

  it('uses age features when an age is given, and age_a and age_b change the score of the same text', async () => {
    const conversation = chat(10);
    const none = (await predict({ conversation })).json();
    const aged = (await predict({ conversation, age_a: '35', age_b: '12' })).json();
    const swapped = (await predict({ conversation, age_a: '12', age_b: '35' })).json();
    expect(none.used_age_features).toBe(false);
    expect(aged.used_age_features).toBe(true);
    expect(swapped.used_age_features).toBe(true);
    expect(aged.harmful_score).not.toBe(swapped.harmful_score);
  });

  it.each(['14', '13-15', 'minor', 'adult', 'ADULT'])('accepts the age form %s', async (age) => {
    const res = await predict({ conversation: chat(4), age_b: age });
    expect(res.statusCode).toBe(200);
    expect(res.json().used_age_features).toBe(true);
  });

  it.each([
    ['age_a', 'twelve'],
    ['age_a', '15-13'],
    ['age_b', '12.5'],
    ['age_b', '-3'],
    ['age_b', ''],
    ['age_a', '1'.repeat(33)],
  ])('answers 422 naming %s for the invalid age %j', async (field, value) => {
    const res = await predict({ conversation: chat(4), [field]: value });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(new RegExp(`^${field}\\b`));
  });

  it('answers 422 when conversation is missing, empty, too long or not a string', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /^conversation: is required/],
      [{ conversation: '' }, /^conversation: must not be empty/],
      [{ conversation: 'x'.repeat(500_001) }, /^conversation: must be at most 500000 characters/],
      [{ conversation: 42 }, /^conversation: must be string/],
      [[], /^body: must be a JSON object/],
    ];
    for (const [body, detail] of cases) {
      const res = await predict(body);
      expect(res.statusCode).toBe(422);
      expect(res.json().detail).toMatch(detail);
    }
  });

  it('accepts exactly 500,000 characters, counted in code points', async () => {
    const res = await predict({ conversation: `user1: ${'é'.repeat(499_993)}` });
    expect(res.statusCode).toBe(200);
    const astral = await predict({ conversation: '😀'.repeat(500_000) });
    expect(astral.statusCode).toBe(200);
  });

  it('scores speakers named like built-in object members (constructor, __proto__) as any other names', async () => {
    for (const conversation of ['constructor: hi\nbob: hello there', '__proto__: hi\nvalueOf: hey', 'hasOwnProperty: u there?']) {
      const res = await predict({ conversation });
      expect(res.statusCode, conversation).toBe(200);
      expect(Object.keys(res.json().user_probabilities).sort()).toEqual(['neither', 'user1', 'user2']);
    }
  });

  it('splits a long conversation into several segments', async () => {
    const p = (await predict({ conversation: chat(400) })).json();
    expect(p.num_segments).toBeGreaterThan(1);
  });

  it('answers 422 for an unknown field so a misspelt age is never silently ignored', async () => {
    const res = await predict({ conversation: chat(2), age_A: '12' });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toBe('body: unknown field "age_A"');
  });

  it('answers 422 for malformed JSON and for an empty JSON body', async () => {
    const bad = await t.app.inject({
      method: 'POST',
      url: '/predict',
      headers: { ...bearer(), 'content-type': 'application/json' },
      payload: '{"conversation": "user1: hi',
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({ detail: 'body: malformed JSON', code: 'malformed_json' });
    const empty = await t.app.inject({
      method: 'POST',
      url: '/predict',
      headers: { ...bearer(), 'content-type': 'application/json' },
      payload: '',
    });
    expect(empty.statusCode).toBe(422);
  });

  it('answers 422 asking for a JSON object for a text body or a body with no type, and 415 for a media type it cannot parse', async () => {
    const send = (type: string) =>
      t.app.inject({ method: 'POST', url: '/predict', headers: { ...bearer(), 'content-type': type }, payload: 'user1: hi' });
    const text = await send('text/plain');
    expect(text.statusCode).toBe(422);
    expect(text.json()).toEqual({ detail: 'body: must be a JSON object (Content-Type: application/json)', code: 'invalid_field' });
    const untyped = await t.app.inject({ method: 'POST', url: '/predict', headers: bearer() });
    expect(untyped.statusCode).toBe(422);
    expect(untyped.json()).toEqual({ detail: 'body: must be a JSON object (Content-Type: application/json)', code: 'invalid_field' });
    const xml = await send('application/xml');
    expect(xml.statusCode).toBe(415);
    expect(xml.json().detail).toMatch(/application\/json/);
  });

  it('answers 413 with a detail when the body exceeds BODY_LIMIT_BYTES', async () => {
    const small = await startTestApp({ env: { BODY_LIMIT_BYTES: '1024' }, scorer: t.scorer });
    try {
      const res = await small.app.inject({
        method: 'POST',
        url: '/predict',
        headers: bearer(),
        payload: { conversation: 'x'.repeat(2000) },
      });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual({ detail: 'Request body exceeds the limit of 1024 bytes', code: 'body_too_large' });
    } finally {
      await small.close();
    }
  });

  it('answers unknown routes with 404 and a detail', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'Not found', code: 'not_found' });
  });

  it('answers scores with Cache-Control: no-store (the preview is the conversation’s own text), errors too', async () => {
    const ok = await predict({ conversation: 'user1: hi\nuser2: hello' });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['cache-control']).toBe('no-store');
    const bad = await predict({ conversation: '' });
    expect(bad.statusCode).toBe(422);
    expect(bad.headers['cache-control']).toBe('no-store');
  });

  it('sets security headers (HSTS, nosniff) on answers', async () => {
    const res = await predict({ conversation: chat(2) });
    expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});
