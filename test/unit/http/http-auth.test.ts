// Bearer authentication: 401 without a key, 403 with a wrong one, hashed keys, key files, and
// authentication decided before the body is read (401/403 win over 422 and 413).
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadApiKeys, matchKey, parseKeyEntries } from '../../../src/http/auth.ts';
import { bearer, chat, OTHER_KEY, startTestApp, TEST_KEY, type TestApp } from '../../helpers/app.ts';

const HASHED_KEY = 'only-its-hash-is-configured';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ keys: [TEST_KEY, `sha256:${sha(HASHED_KEY)}`], env: { BODY_LIMIT_BYTES: '4096' } });
});
afterAll(async () => t.close());

const post = (url: string, headers: Record<string, string>, payload: unknown = { conversation: chat(2) }) =>
  t.app.inject({ method: 'POST', url, headers, payload: payload as object });

describe('authentication', () => {
  it.each(['/predict', '/batch_predict'])('answers 401 with the exact spec detail on %s without a key', async (url) => {
    const res = await post(url, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: 'API key required (Bearer token)', code: 'missing_api_key' });
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('answers 401 on GET /info without a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/info' });
    expect(res.statusCode).toBe(401);
  });

  it.each([['Basic dXNlcjpwYXNz'], ['Bearer'], ['Bearer '], [TEST_KEY], ['Token abc']])(
    'treats the malformed Authorization header %j as no key (401)',
    async (header) => {
      expect((await post('/predict', { authorization: header })).statusCode).toBe(401);
    },
  );

  it('answers 403 "Invalid API key" for a wrong key', async () => {
    const res = await post('/predict', bearer('not-a-key'));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ detail: 'Invalid API key', code: 'invalid_api_key' });
  });

  it('does not accept a key that was not configured for this app', async () => {
    expect((await post('/predict', bearer(OTHER_KEY))).statusCode).toBe(403);
  });

  it('accepts the scheme in any case', async () => {
    expect((await post('/predict', { authorization: `bearer ${TEST_KEY}` })).statusCode).toBe(200);
  });

  it('accepts a key configured only as sha256:<hex>, and refuses the hash itself as a key', async () => {
    expect((await post('/predict', bearer(HASHED_KEY))).statusCode).toBe(200);
    expect((await post('/predict', bearer(sha(HASHED_KEY)))).statusCode).toBe(403);
  });

  it('checks the key before the body: 401/403 win over an invalid body (422)', async () => {
    expect((await post('/predict', {}, { conversation: '' })).statusCode).toBe(401);
    expect((await post('/predict', bearer('wrong'), { nope: 1 })).statusCode).toBe(403);
    const malformed = await t.app.inject({
      method: 'POST',
      url: '/batch_predict',
      headers: { 'content-type': 'application/json', ...bearer('wrong') },
      payload: '{not json',
    });
    expect(malformed.statusCode).toBe(403);
  });

  it('checks the key before reading a body over the size limit (401, not 413)', async () => {
    expect((await post('/predict', {}, { conversation: 'x'.repeat(10_000) })).statusCode).toBe(401);
    expect((await post('/predict', bearer(), { conversation: 'x'.repeat(10_000) })).statusCode).toBe(413);
  });

  it('leaves the probes public', async () => {
    for (const url of ['/health', '/livez', '/readyz']) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    }
  });
});

describe('key configuration', () => {
  it('reads API_KEYS as a comma list, ignoring blanks and spaces', () => {
    const set = loadApiKeys({ API_KEYS: ' a-key , ,b-key', API_KEYS_FILE: undefined });
    expect(set.generated).toBeUndefined();
    expect(set.keys).toHaveLength(2);
    expect(matchKey(set.keys, 'a-key')).toBeDefined();
    expect(matchKey(set.keys, 'b-key')).toBeDefined();
    expect(matchKey(set.keys, ' a-key ')).toBeUndefined();
  });

  it('reads API_KEYS_FILE one key per line with # comments', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    const file = join(dir, 'keys');
    writeFileSync(file, `# operator keys\nfile-key-1\r\n\n  # rotated 2026-11\nsha256:${sha('file-key-2')}\n`);
    const set = loadApiKeys({ API_KEYS: undefined, API_KEYS_FILE: file });
    expect(set.keys).toHaveLength(2);
    expect(matchKey(set.keys, 'file-key-1')).toBeDefined();
    expect(matchKey(set.keys, 'file-key-2')).toBeDefined();
    expect(matchKey(set.keys, '# operator keys')).toBeUndefined();
  });

  it('generates a random key when none is configured', () => {
    const a = loadApiKeys({ API_KEYS: undefined, API_KEYS_FILE: undefined });
    const b = loadApiKeys({ API_KEYS: '', API_KEYS_FILE: undefined });
    expect(a.generated).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(b.generated).not.toBe(a.generated);
    expect(matchKey(a.keys, a.generated as string)).toBe(a.keys[0]?.id);
  });

  it('refuses a configured source that holds no key, instead of generating one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    const file = join(dir, 'keys');
    writeFileSync(file, '# keys go here\n\n');
    expect(() => loadApiKeys({ API_KEYS: undefined, API_KEYS_FILE: file })).toThrow(/holds no key/);
    expect(() => loadApiKeys({ API_KEYS: ' , ', API_KEYS_FILE: undefined })).toThrow(/holds no key/);
  });

  it('refuses a key no Bearer header can carry (a space, a non-ASCII letter), without quoting it', () => {
    for (const entry of ['spaced key-0123456789', 'schlüssel-0123456789']) {
      expect(() => parseKeyEntries(['good-key-0123456789', entry])).toThrow(/entry 2 holds a space or a character outside printable ASCII/);
      const message = (() => {
        try {
          parseKeyEntries([entry]);
        } catch (err) {
          return (err as Error).message;
        }
        return 'no error';
      })();
      expect(message).toMatch(/^API key entry 1 /);
      expect(message).not.toMatch(/spaced|schl/);
    }
  });

  it('counts plaintext keys shorter than 16 characters, for a warning at start; hashes are not counted', () => {
    expect(loadApiKeys({ API_KEYS: `a-key,${'k'.repeat(32)},sha256:${sha('x')}`, API_KEYS_FILE: undefined }).short).toBe(1);
    expect(loadApiKeys({ API_KEYS: 'k'.repeat(16), API_KEYS_FILE: undefined }).short).toBe(0);
  });

  it('refuses a sha256: entry that is not 64 hex digits, without quoting it', () => {
    expect(() => parseKeyEntries(['good', 'sha256:abc-secret'])).toThrow(/entry 2/);
    const message = (() => {
      try {
        parseKeyEntries(['sha256:abc-secret']);
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    })();
    expect(message).toMatch(/^API key entry 1 /);
    expect(message).not.toContain('abc-secret');
  });

  it('gives each key a stable id that reveals neither the key nor its hash', () => {
    const [k] = parseKeyEntries(['some-key']);
    const [h] = parseKeyEntries([`sha256:${sha('some-key')}`]);
    expect(k?.id).toBe(h?.id);
    expect(k?.id).not.toContain(sha('some-key').slice(0, 8));
  });
});
