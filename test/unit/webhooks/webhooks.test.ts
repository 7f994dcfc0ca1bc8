// Webhook signing, the SSRF guard and delivery with retries, against a real HTTP receiver.
import { errorText } from '../../../src/error-catalogue.ts';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../../src/http/listeners.ts';
import { fullJitter, retryAfterMs } from '../../../src/webhooks/backoff.ts';
import { deliverWebhook, type DeliveryPolicy } from '../../../src/webhooks/delivery.ts';
import { createJobMetrics } from '../../../src/jobs/metrics.ts';
import { parseAllowedHosts, parseWebhookSecret } from '../../../src/webhooks/settings.ts';
import { signWebhook, webhookMessageId } from '../../../src/webhooks/signing.ts';
import { checkWebhookTarget } from '../../../src/webhooks/target.ts';
import { startReceiver, verifyStandardWebhook, type Receiver } from '../../helpers/webhook-receiver.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('signing follows Standard Webhooks', () => {
  it('matches the reference library known-answer vector', () => {
    // From standard-webhooks/libraries/javascript "sign function works".
    const key = parseWebhookSecret(SECRET);
    expect(signWebhook(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('rejects a secret without the whsec_ prefix, with bad base64, or shorter than 16 bytes', () => {
    expect(() => parseWebhookSecret('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toThrow(/whsec_/);
    expect(() => parseWebhookSecret('whsec_not base64!!')).toThrow(/base64/);
    expect(() => parseWebhookSecret('whsec_c2hvcnQ=')).toThrow(/16 bytes/);
  });

  it("a job's message id is its own, the same every time: one per job, kept by every resend", () => {
    const job = '0f8fad5b-d9cb-469f-a165-70867728950e';
    expect(webhookMessageId(job)).toBe(`msg_${job}`);
    expect(webhookMessageId(job)).toBe(webhookMessageId(job));
    expect(webhookMessageId('another-job')).not.toBe(webhookMessageId(job));
  });
});

describe('the SSRF guard accepts only allow-listed host:port over https', () => {
  const policy = { allowedHosts: parseAllowedHosts('hooks.example.org:443,Receiver.Local:8443,[::1]:9000'), allowHttp: false };

  it('accepts an allow-listed https URL, with the default port or the listed one, host case-insensitive', () => {
    expect(checkWebhookTarget('https://hooks.example.org/cb?x=1', policy).ok).toBe(true);
    expect(checkWebhookTarget('https://HOOKS.example.org:443/cb', policy).ok).toBe(true);
    expect(checkWebhookTarget('https://receiver.local:8443/', policy).ok).toBe(true);
    expect(checkWebhookTarget('https://[::1]:9000/x', policy).ok).toBe(true);
  });

  it.each([
    ['not a url', /absolute URL/],
    ['/relative/path', /absolute URL/],
    ['ftp://hooks.example.org/', /https/],
    ['http://hooks.example.org/', /WEBHOOK_ALLOW_HTTP/],
    ['https://user:pw@hooks.example.org/', /credentials/],
    ['https://hooks.example.org:8443/', /not in WEBHOOK_ALLOWED_HOSTS/],
    ['https://evil.example.org/', /not in WEBHOOK_ALLOWED_HOSTS/],
    ['https://hooks.example.org.evil.net/', /not in WEBHOOK_ALLOWED_HOSTS/],
    ['https://127.0.0.1/', /not in WEBHOOK_ALLOWED_HOSTS/],
    ['https://receiver.local/', /not in WEBHOOK_ALLOWED_HOSTS/],
  ])('refuses %s', (url, detail) => {
    const check = checkWebhookTarget(url, policy);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(errorText(check.error)).toMatch(detail);
  });

  it('plain http passes only with WEBHOOK_ALLOW_HTTP, and then port 80 is its default', () => {
    const http = { allowedHosts: parseAllowedHosts(['hooks.example.org:80']), allowHttp: true };
    expect(checkWebhookTarget('http://hooks.example.org/cb', http).ok).toBe(true);
    expect(checkWebhookTarget('https://hooks.example.org/cb', http).ok).toBe(false);
  });

  it('refuses allow-list entries that are not host or host:port', () => {
    expect(() => parseAllowedHosts('https://x.org/path')).toThrow(/WEBHOOK_ALLOWED_HOSTS/);
    expect(() => parseAllowedHosts('user@x.org:443')).toThrow(/WEBHOOK_ALLOWED_HOSTS/);
  });
});

describe('backoff', () => {
  it('full jitter stays within [0, min(cap, base * 2^retry))', () => {
    expect(fullJitter(20, 0, 1000, () => 0.999)).toBeLessThan(20);
    expect(fullJitter(20, 3, 1000, () => 0.999)).toBe(159);
    expect(fullJitter(20, 20, 1000, () => 0.999)).toBe(999);
    expect(fullJitter(20, 5, 1000, () => 0)).toBe(0);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThan(3000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});

describe('delivery to a real receiver', () => {
  let receiver: Receiver;
  const key = parseWebhookSecret(SECRET);
  const policy: DeliveryPolicy = { key, timeoutMs: 1000, retryBaseMs: 20, maxAttempts: 4, maxRetryMs: 10_000 };
  const message = () => ({ id: webhookMessageId('j'), body: JSON.stringify({ type: 'batch.completed', data: { job_id: 'j' } }) });
  let registry: Registry;
  const metricsFor = () => createJobMetrics(registry, async () => ({ unfinishedJobs: 0, pendingItems: 0 }));

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => receiver.close());
  afterEach(() => {
    receiver.requests.length = 0;
    receiver.script();
    registry = new Registry();
  });
  registry = new Registry();

  it('sends a signed POST that an independent Standard Webhooks verifier accepts', async () => {
    const msg = message();
    const result = await deliverWebhook(new URL(receiver.url()), msg, policy);
    expect(result).toEqual({ delivered: true, attempts: 1, startedAt: expect.any(Number) });
    const [req] = receiver.requests;
    expect(req?.method).toBe('POST');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.headers['webhook-id']).toBe(msg.id);
    expect(req?.body).toBe(msg.body);
    expect(verifyStandardWebhook(SECRET, req!)).toBe(true);
    // A different secret or a changed body must not verify: the check above can fail.
    expect(verifyStandardWebhook('whsec_' + Buffer.alloc(24, 1).toString('base64'), req!)).toBe(false);
    expect(verifyStandardWebhook(SECRET, { ...req!, body: req!.body + ' ' })).toBe(false);
  });

  it('retries after a 503 and succeeds, keeping the webhook-id and re-signing each attempt', async () => {
    receiver.script({ status: 503 }, { status: 500 });
    const metrics = metricsFor();
    const result = await deliverWebhook(new URL(receiver.url()), message(), policy, { metrics });
    expect(result).toEqual({ delivered: true, attempts: 3, startedAt: expect.any(Number) });
    expect(receiver.requests).toHaveLength(3);
    const ids = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    for (const r of receiver.requests) expect(verifyStandardWebhook(SECRET, r)).toBe(true);
    const text = await registry.metrics();
    expect(text).toMatch(/conversation_risk_webhook_delivery_duration_seconds_count\{result="http_error"\} 2/);
    expect(text).toMatch(/conversation_risk_webhook_delivery_duration_seconds_count\{result="success"\} 1/);
  });

  it('gives up after WEBHOOK_MAX_ATTEMPTS failed attempts', async () => {
    receiver.script(...Array.from({ length: 10 }, () => ({ status: 500 })));
    const result = await deliverWebhook(new URL(receiver.url()), message(), policy);
    expect(result.delivered).toBe(false);
    expect(result.attempts).toBe(4);
    expect(result.lastError).toBe('HTTP 500');
    expect(receiver.requests).toHaveLength(4);
  });

  it('taken over from a replica that stopped, counts that replica\'s attempts and time against the limits', async () => {
    receiver.script(...Array.from({ length: 10 }, () => ({ status: 500 })));
    const resumed = await deliverWebhook(new URL(receiver.url()), message(), policy, { resumeFrom: { attempts: 3, startedAt: Date.now() } });
    expect(resumed).toMatchObject({ delivered: false, attempts: 4 });
    expect(receiver.requests).toHaveLength(1);
    const used = await deliverWebhook(new URL(receiver.url()), message(), policy, { resumeFrom: { attempts: 4, startedAt: Date.now() } });
    expect(used).toMatchObject({ delivered: false, attempts: 4 });
    const late = await deliverWebhook(new URL(receiver.url()), message(), policy, { resumeFrom: { attempts: 1, startedAt: Date.now() - 11_000 } });
    expect(late).toMatchObject({ delivered: false, attempts: 1 });
    expect(receiver.requests).toHaveLength(1);
  });

  it('a retry it scheduled itself within the budget is made even when started past it; a resumed failure keeps the last cause', async () => {
    const late = { attempts: 1, startedAt: Date.now() - 11_000, lastError: 'HTTP 503' };
    expect(await deliverWebhook(new URL(receiver.url()), message(), policy, { resumeFrom: { ...late, scheduled: true } })).toEqual({ delivered: true, attempts: 2, startedAt: late.startedAt });
    expect(await deliverWebhook(new URL(receiver.url()), message(), policy, { resumeFrom: late })).toMatchObject({
      delivered: false,
      attempts: 1,
      lastError: 'HTTP 503; attempts or retry budget used up before this replica took the delivery over',
    });
    expect(receiver.requests).toHaveLength(1);
  });

  it('stops at a 410 Gone (Standard Webhooks: the endpoint is gone), where a 404 is tried again', async () => {
    receiver.script(...Array.from({ length: 4 }, () => ({ status: 410 })));
    expect(await deliverWebhook(new URL(receiver.url()), message(), policy)).toEqual({ delivered: false, attempts: 1, lastError: 'HTTP 410 (gone: not tried again)', startedAt: expect.any(Number) });
    expect(receiver.requests).toHaveLength(1);
    receiver.requests.length = 0;
    receiver.script({ status: 404 });
    expect(await deliverWebhook(new URL(receiver.url()), message(), policy)).toEqual({ delivered: true, attempts: 2, startedAt: expect.any(Number) });
  });

  it('never follows a redirect: a 3xx is a failed attempt', async () => {
    const redirect = { status: 307, headers: { location: receiver.url('/elsewhere') } };
    receiver.script(redirect, redirect, redirect, redirect);
    const result = await deliverWebhook(new URL(receiver.url()), message(), { ...policy, maxAttempts: 2 });
    expect(result).toMatchObject({ delivered: false, attempts: 2, lastError: 'HTTP 307' });
    expect(receiver.requests.map((r) => r.path)).toEqual(['/hook', '/hook']);
  });

  it('honours Retry-After on 429 as the least wait before the next attempt', async () => {
    receiver.script({ status: 429, headers: { 'retry-after': '1' } });
    const result = await deliverWebhook(new URL(receiver.url()), message(), policy);
    expect(result).toEqual({ delivered: true, attempts: 2, startedAt: expect.any(Number) });
    const [a, b] = receiver.requests;
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(950);
  });

  it('with deferRetries, answers when the next attempt is due instead of waiting, and resumes from it with the same budget', async () => {
    receiver.script({ status: 503, headers: { 'retry-after': '5' } }, { status: 500 });
    const before = Date.now();
    const first = await deliverWebhook(new URL(receiver.url()), message(), policy, { deferRetries: true });
    // Answered at once, not after Retry-After's 5 s.
    expect(Date.now() - before).toBeLessThan(2500);
    expect(first).toMatchObject({ delivered: false, attempts: 1, lastError: 'HTTP 503' });
    expect(first.retryAt! - before).toBeGreaterThanOrEqual(5000);
    expect(first.startedAt).toBeGreaterThanOrEqual(before);
    const resumed = await deliverWebhook(new URL(receiver.url()), message(), policy, { deferRetries: true, resumeFrom: { attempts: first.attempts, startedAt: first.startedAt } });
    expect(resumed).toMatchObject({ delivered: false, attempts: 2, lastError: 'HTTP 500', startedAt: first.startedAt });
    expect(resumed.retryAt).toBeDefined();
    const last = await deliverWebhook(new URL(receiver.url()), message(), policy, { deferRetries: true, resumeFrom: { attempts: 3, startedAt: first.startedAt } });
    expect(last).toEqual({ delivered: true, attempts: 4, startedAt: first.startedAt });
    expect(receiver.requests).toHaveLength(3);
    // The last attempt never defers: it ends the delivery.
    receiver.script({ status: 500 });
    const failed = await deliverWebhook(new URL(receiver.url()), message(), policy, { deferRetries: true, resumeFrom: { attempts: 3, startedAt: first.startedAt } });
    expect(failed).toEqual({ delivered: false, attempts: 4, lastError: 'HTTP 500', startedAt: first.startedAt });
  });

  it('stops when Retry-After goes past the total retry budget', async () => {
    receiver.script({ status: 503, headers: { 'retry-after': '60' } });
    const result = await deliverWebhook(new URL(receiver.url()), message(), { ...policy, maxRetryMs: 2000 });
    expect(result.delivered).toBe(false);
    expect(result.attempts).toBe(1);
    expect(result.lastError).toMatch(/budget/);
  });

  it('treats a receiver slower than WEBHOOK_TIMEOUT_MS as a failed attempt and retries', async () => {
    receiver.script({ status: 200, delayMs: 2000 });
    const metrics = metricsFor();
    const result = await deliverWebhook(new URL(receiver.url()), message(), { ...policy, timeoutMs: 150 }, { metrics });
    expect(result).toEqual({ delivered: true, attempts: 2, startedAt: expect.any(Number) });
    expect(await registry.metrics()).toMatch(/webhook_delivery_duration_seconds_count\{result="timeout"\} 1/);
  });

  it('retries connection errors and reports the last one', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((r) => probe.close(() => r()));
    const result = await deliverWebhook(new URL(`http://127.0.0.1:${port}/`), message(), { ...policy, maxAttempts: 3 });
    expect(result).toMatchObject({ delivered: false, attempts: 3, lastError: 'ECONNREFUSED' });
  });

  it('an abort (shutdown deadline) ends the retries at once', async () => {
    receiver.script(...Array.from({ length: 10 }, () => ({ status: 500 })));
    const controller = new AbortController();
    const pending = deliverWebhook(new URL(receiver.url()), message(), { ...policy, retryBaseMs: 5000 }, { signal: controller.signal });
    await receiver.waitFor(1);
    controller.abort();
    const result = await pending;
    expect(result.delivered).toBe(false);
    expect(result.attempts).toBe(1);
  });
});

describe('delivery over a real TLS socket', () => {
  let receiver: Receiver;
  let dir: string;
  let caFile: string;
  const key = parseWebhookSecret(SECRET);
  const policy: DeliveryPolicy = { key, timeoutMs: 2000, retryBaseMs: 20, maxAttempts: 2, maxRetryMs: 10_000 };

  beforeAll(async () => {
    const tls = await selfSignedCertificate();
    receiver = await startReceiver({ tls });
    dir = mkdtempSync(join(tmpdir(), 'webhook-ca-'));
    caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, tls.cert);
  });
  afterAll(async () => {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a receiver whose certificate is not trusted: nothing is sent', async () => {
    const result = await deliverWebhook(new URL(receiver.url()), { id: webhookMessageId('tls-job'), body: '{}' }, policy);
    expect(result.delivered).toBe(false);
    expect(result.attempts).toBe(2);
    expect(result.lastError).toMatch(/CERT|SELF_SIGNED/);
    expect(receiver.requests).toHaveLength(0);
  });

  it('delivers, signed, to a receiver trusted through NODE_EXTRA_CA_CERTS', async () => {
    // NODE_EXTRA_CA_CERTS is read at process start, as an operator would set it: run a fresh process.
    const script = [
      `import { deliverWebhook } from ${JSON.stringify(join(import.meta.dirname, '../../../src/webhooks/delivery.ts'))};`,
      `import { parseWebhookSecret } from ${JSON.stringify(join(import.meta.dirname, '../../../src/webhooks/settings.ts'))};`,
      `const policy = { key: parseWebhookSecret(${JSON.stringify(SECRET)}), timeoutMs: 2000, retryBaseMs: 20, maxAttempts: 1, maxRetryMs: 1000 };`,
      `const r = await deliverWebhook(new URL(${JSON.stringify(receiver.url('/tls'))}), { id: 'msg_tls', body: '{"ok":true}' }, policy);`,
      'process.stdout.write(JSON.stringify(r));',
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile },
    });
    expect(JSON.parse(stdout)).toEqual({ delivered: true, attempts: 1, startedAt: expect.any(Number) });
    const [req] = receiver.requests;
    expect(req?.path).toBe('/tls');
    expect(verifyStandardWebhook(SECRET, req!)).toBe(true);
  });
});
