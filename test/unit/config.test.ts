// Configuration: every variable has its documented default, a bad value is refused naming the
// variable, and the process exits non-zero on one.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, configSchema, loadConfig } from '../../src/config.ts';
import { REPO_ROOT } from '../helpers/app.ts';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      HOST: '0.0.0.0',
      PORT: 8443,
      HTTP_PORT: 8080,
      TLS_MODE: 'on',
      TLS_CERT_FILE: undefined,
      TLS_KEY_FILE: undefined,
      TRUST_PROXY: false,
      API_KEYS: undefined,
      API_KEYS_FILE: undefined,
      RATE_LIMIT_MAX: 60,
      RATE_LIMIT_WINDOW_MS: 60_000,
      METRICS_PORT: 9464,
      METRICS_HOST: '0.0.0.0',
      LOG_LEVEL: 'info',
      AUDIT_LOG: false,
      MODEL_DIR: join(REPO_ROOT, 'models', 'conversation-risk'),
      WORKERS: availableParallelism(),
      INTRA_OP_THREADS: 1,
      MAX_QUEUE: 64,
      REQUEST_TIMEOUT_MS: 30_000,
      KEEP_ALIVE_TIMEOUT_MS: 5000,
      TLS_RELOAD_INTERVAL_MS: 60_000,
      SHUTDOWN_GRACE_MS: 10_000,
      BODY_LIMIT_BYTES: 32 * 1024 * 1024,
      WEBHOOK_SIGNING_KEY: undefined,
      WEBHOOK_ALLOWED_HOSTS: [],
      WEBHOOK_ALLOW_HTTP: false,
      WEBHOOK_RETRY_BASE_MS: 1000,
      WEBHOOK_MAX_ATTEMPTS: 8,
      WEBHOOK_MAX_RETRY_MS: 3_600_000,
      WEBHOOK_TIMEOUT_MS: 10_000,
      JOB_MAX_ITEMS: 1000,
      JOB_MAX_QUEUED_PER_KEY: 10,
      JOB_MAX_QUEUED_CHARS: 50_000_000,
      JOB_RESULT_TTL_MS: 3_600_000,
    });
  });

  it('holds idle keep-alive connections no longer than REQUEST_TIMEOUT_MS by default, and as long as KEEP_ALIVE_TIMEOUT_MS says when set', () => {
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '2000' }).KEEP_ALIVE_TIMEOUT_MS).toBe(2000);
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '2000', KEEP_ALIVE_TIMEOUT_MS: '65000' }).KEEP_ALIVE_TIMEOUT_MS).toBe(65_000);
    expect(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: '0' })).toThrow(/KEEP_ALIVE_TIMEOUT_MS/);
  });

  it('documents every variable in the README configuration table', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
    for (const name of Object.keys(configSchema.properties)) expect(readme, name).toMatch(new RegExp(`\\| \`${name}\` \\|`));
  });

  it('parses types: numbers, booleans, lists; METRICS_HOST follows HOST; empty means unset', () => {
    const c = loadConfig({ HOST: '127.0.0.1', PORT: '9000', AUDIT_LOG: 'true', WEBHOOK_ALLOWED_HOSTS: 'a.example:443, [::1]:8080', HTTP_PORT: '' });
    expect(c.PORT).toBe(9000);
    expect(c.HTTP_PORT).toBe(8080);
    expect(c.AUDIT_LOG).toBe(true);
    expect(c.METRICS_HOST).toBe('127.0.0.1');
    expect(c.WEBHOOK_ALLOWED_HOSTS).toEqual(['a.example:443', '[::1]:8080']);
    expect(loadConfig({ MODEL_DIR: '/m' }).MODEL_DIR).toBe('/m');
  });

  it.each([
    ['false', false],
    ['true', true],
    ['2', 2],
    ['10.0.0.1, 192.168.0.0/16,::1', ['10.0.0.1', '192.168.0.0/16', '::1']],
    ['loopback', ['loopback']],
  ])('reads TRUST_PROXY=%j for fastify', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).TRUST_PROXY).toEqual(expected);
  });

  it.each([
    ['PORT', '70000'],
    ['PORT', 'http'],
    ['HTTP_PORT', '-1'],
    ['TLS_MODE', 'maybe'],
    ['RATE_LIMIT_MAX', '0'],
    ['RATE_LIMIT_WINDOW_MS', '1.5'],
    ['LOG_LEVEL', 'loud'],
    ['AUDIT_LOG', 'yes please'],
    ['WORKERS', '0'],
    ['MAX_QUEUE', 'many'],
    ['BODY_LIMIT_BYTES', '-5'],
    ['TRUST_PROXY', 'proxy.example'],
    ['TRUST_PROXY', '10.0.0.0/40'],
    ['WEBHOOK_SECRET', 'not-a-secret'],
    // Matches the base64 shape but decodes to 3 bytes: too short to be an HMAC key.
    ['WEBHOOK_SECRET', 'whsec_YWJj'],
    ['WEBHOOK_ALLOWED_HOSTS', 'no-port.example'],
    ['WEBHOOK_MAX_ATTEMPTS', '0'],
    ['JOB_RESULT_TTL_MS', 'soon'],
    ['PUBLIC_HOST', 'evil.example/x?'],
    ['PUBLIC_HOST', 'risk.example:8443'],
    // 30 days: past what a Node timer holds, so the results would expire at once.
    ['JOB_RESULT_TTL_MS', '2592000000'],
    ['WEBHOOK_MAX_RETRY_MS', '2147483648'],
  ])('refuses %s=%j naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  it('refuses a first webhook retry delay longer than the whole retry budget, naming both variables', () => {
    expect(() => loadConfig({ WEBHOOK_RETRY_BASE_MS: '7200000', WEBHOOK_MAX_RETRY_MS: '3600000' })).toThrow(/WEBHOOK_RETRY_BASE_MS \(7200000\) must not exceed WEBHOOK_MAX_RETRY_MS \(3600000\)/);
    expect(() => loadConfig({ WEBHOOK_MAX_RETRY_MS: '500' })).toThrow(ConfigError);
    expect(loadConfig({ WEBHOOK_RETRY_BASE_MS: '60000', WEBHOOK_MAX_RETRY_MS: '60000' }).WEBHOOK_MAX_RETRY_MS).toBe(60000);
  });

  it('refuses a certificate without its key and API_KEYS together with API_KEYS_FILE', () => {
    expect(() => loadConfig({ TLS_CERT_FILE: '/c.pem' })).toThrow(/TLS_CERT_FILE and TLS_KEY_FILE/);
    expect(() => loadConfig({ API_KEYS: 'a', API_KEYS_FILE: '/k' })).toThrow(/API_KEYS or API_KEYS_FILE/);
  });

  it('reads the audit hash key from the first line of AUDIT_HASH_KEY_FILE, refusing one unreadable or shorter than 32 characters', () => {
    const dir = mkdtempSync(join(tmpdir(), 'config-'));
    writeFileSync(join(dir, 'good'), `${'a'.repeat(64)}\nignored`);
    writeFileSync(join(dir, 'short'), 'a'.repeat(31));
    expect(loadConfig({ AUDIT_HASH_KEY_FILE: join(dir, 'good') }).AUDIT_HASH_KEY).toEqual(Buffer.from('a'.repeat(64)));
    expect(loadConfig({}).AUDIT_HASH_KEY).toBeUndefined();
    expect(() => loadConfig({ AUDIT_HASH_KEY_FILE: join(dir, 'short') })).toThrow(/AUDIT_HASH_KEY_FILE must hold a key of at least 32 characters/);
    expect(() => loadConfig({ AUDIT_HASH_KEY_FILE: join(dir, 'absent') })).toThrow(/AUDIT_HASH_KEY_FILE cannot be read/);
  });

  it('reads the webhook secret from WEBHOOK_SECRET_FILE, refusing it together with WEBHOOK_SECRET, unreadable or malformed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'config-'));
    const good = join(dir, 'good');
    const bad = join(dir, 'bad');
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    writeFileSync(good, `${secret}\n`);
    writeFileSync(bad, 'whsec_YWJj\n');
    expect(loadConfig({ WEBHOOK_SECRET_FILE: good }).WEBHOOK_SIGNING_KEY).toEqual(Buffer.alloc(32, 7));
    expect(() => loadConfig({ WEBHOOK_SECRET_FILE: good, WEBHOOK_SECRET: secret })).toThrow(/WEBHOOK_SECRET or WEBHOOK_SECRET_FILE/);
    expect(() => loadConfig({ WEBHOOK_SECRET_FILE: join(dir, 'absent') })).toThrow(/WEBHOOK_SECRET_FILE cannot be read/);
    expect(() => loadConfig({ WEBHOOK_SECRET_FILE: bad })).toThrow(/WEBHOOK_SECRET_FILE/);
  });

  it('names the variable and what it accepts: an enum lists its values, a host must be an IP address', () => {
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow('LOG_LEVEL must be equal to one of the allowed values: fatal, error, warn, info, debug, trace, silent');
    expect(() => loadConfig({ HOST: 'not-an-ip' })).toThrow(/HOST must be an IP address .* got "not-an-ip"/);
    expect(() => loadConfig({ METRICS_HOST: 'metrics.local' })).toThrow(/METRICS_HOST must be an IP address/);
    expect(loadConfig({ HOST: '::1' }).HOST).toBe('::1');
    expect(loadConfig({ HOST: 'localhost' }).HOST).toBe('localhost');
  });

  it('reads REDIS_URL or REDIS_URL_FILE and demands a valid REDIS_ENCRYPTION_KEY_FILE with either', () => {
    const dir = mkdtempSync(join(tmpdir(), 'config-redis-'));
    const key = join(dir, 'key');
    const shortKey = join(dir, 'short');
    const urlFile = join(dir, 'url');
    writeFileSync(key, `${Buffer.alloc(32, 3).toString('base64')}\n`);
    writeFileSync(shortKey, `${Buffer.alloc(16, 3).toString('base64')}\n`);
    writeFileSync(urlFile, 'rediss://app:pw@redis.internal:6380\nignored second line\n');
    const none = loadConfig({});
    expect([none.REDIS_URL, none.REDIS_ENCRYPTION_KEY_FILE, none.REDIS_KEY_PREFIX, none.JOB_LOCK_MS]).toEqual([undefined, undefined, 'conversation-risk', 30_000]);
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_ENCRYPTION_KEY_FILE: key }).REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(loadConfig({ REDIS_URL_FILE: urlFile, REDIS_ENCRYPTION_KEY_FILE: key }).REDIS_URL).toBe('rediss://app:pw@redis.internal:6380');
    expect(() => loadConfig({ REDIS_URL: 'redis://h:1' })).toThrow(/REDIS_ENCRYPTION_KEY_FILE/);
    expect(() => loadConfig({ REDIS_URL: 'redis://h:1', REDIS_ENCRYPTION_KEY_FILE: shortKey })).toThrow(/32 random bytes/);
    expect(() => loadConfig({ REDIS_URL: 'redis://h:1', REDIS_ENCRYPTION_KEY_FILE: join(dir, 'absent') })).toThrow(/REDIS_ENCRYPTION_KEY_FILE: cannot read/);
    expect(() => loadConfig({ REDIS_URL: 'http://h:1', REDIS_ENCRYPTION_KEY_FILE: key })).toThrow(/REDIS_URL/);
    expect(() => loadConfig({ REDIS_URL: 'redis://h:1', REDIS_URL_FILE: urlFile, REDIS_ENCRYPTION_KEY_FILE: key })).toThrow(/REDIS_URL or REDIS_URL_FILE/);
    // The message never repeats the URL (it may hold a password).
    let message = 'no error';
    try {
      loadConfig({ REDIS_URL: 'redis://user:s3cret@h:1' });
    } catch (err) {
      message = String(err);
    }
    expect(message).toMatch(/REDIS_ENCRYPTION_KEY_FILE/);
    expect(message).not.toContain('s3cret');
  });

  /** `node src/main.ts` with only PATH and `env` set, run to its exit. */
  const startMain = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['src/main.ts'], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 30_000 });

  it('makes the process exit non-zero with a message naming the bad variable', () => {
    const run = startMain({ RATE_LIMIT_MAX: 'lots' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/invalid configuration: RATE_LIMIT_MAX must be integer/);
  });

  it('exits non-zero naming API_KEYS_FILE when the key file cannot be read', () => {
    const run = startMain({ API_KEYS_FILE: '/nonexistent/keys' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/API_KEYS_FILE/);
  });
});
