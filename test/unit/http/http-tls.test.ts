// Real sockets: HTTPS with TLS 1.2 minimum, the certificate from PEM files or self-signed, the plain
// listener that redirects everything with 308, and the proxy redirect when TLS is terminated upstream.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsLocation, resolveTls, selfSignedCertificate, serverOptions, startListeners, type Listeners, type ResolvedTls } from '../../../src/http/listeners.ts';
import { buildMetricsServer } from '../../../src/http/metrics-listener.ts';
import { bearer, chat, freePort, startTestApp, type TestApp } from '../../helpers/app.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  fingerprint256?: string;
  protocol?: string | null;
}

function call(url: string, options: RequestOptions & { body?: string } = {}): Promise<Answer> {
  const { body, ...rest } = options;
  const send = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { rejectUnauthorized: false, agent: false, ...rest }, (res) => {
      const socket = res.socket as TLSSocket;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          ...(typeof socket.getPeerCertificate === 'function'
            ? { fingerprint256: socket.getPeerCertificate().fingerprint256, protocol: socket.getProtocol() }
            : {}),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

let tls: ResolvedTls;
let t: TestApp;
let listeners: Listeners;
let redirectPort: number;

beforeAll(async () => {
  // PEM files on disk, as an operator would mount them.
  const dir = mkdtempSync(join(tmpdir(), 'tls-'));
  const pems = await selfSignedCertificate();
  writeFileSync(join(dir, 'cert.pem'), pems.cert);
  writeFileSync(join(dir, 'key.pem'), pems.key);
  tls = await resolveTls({ TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'key.pem') });
  redirectPort = await freePort();
  t = await startTestApp({ tls, env: { HTTP_PORT: String(redirectPort), TLS_MODE: 'on' } });
  listeners = await startListeners({ app: t.app, metricsServer: buildMetricsServer(t.metrics, serverOptions(t.config)), config: t.config });
});
afterAll(async () => {
  await listeners.close();
  await t.scorer.close();
});

describe('HTTPS listener', () => {
  it('serves the certificate from TLS_CERT_FILE/TLS_KEY_FILE and scores over TLS 1.2+', async () => {
    const res = await call(`${listeners.appUrl}/predict`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ conversation: chat(6) }),
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).risk_level).toBeTypeOf('string');
    expect(res.fingerprint256).toBe(tls.fingerprint256);
    expect(['TLSv1.2', 'TLSv1.3']).toContain(res.protocol);
    expect(res.headers['strict-transport-security']).toBeDefined();
  });

  it('accepts a client limited to TLS 1.2', async () => {
    const res = await call(`${listeners.appUrl}/health`, { maxVersion: 'TLSv1.2' });
    expect(res.protocol).toBe('TLSv1.2');
  });

  it('refuses a client that offers at most TLS 1.1', async () => {
    // The client is allowed every old cipher, so the refusal can only come from the server's minimum.
    await expect(
      call(`${listeners.appUrl}/health`, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' }),
    ).rejects.toThrow(/protocol|version|alert|handshake/i);
  });

  it('on TLS 1.2 negotiates only forward-secret AEAD suites: CBC with SHA-1 and ARIA are refused', async () => {
    const res = await call(`${listeners.appUrl}/health`, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' });
    expect(res.status).toBe(200);
    for (const ciphers of ['ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES256-SHA', 'ECDHE-ECDSA-ARIA128-GCM-SHA256']) {
      await expect(call(`${listeners.appUrl}/health`, { maxVersion: 'TLSv1.2', ciphers }), ciphers).rejects.toThrow(/handshake|cipher|alert/i);
    }
  });

  it('refuses at start a key that does not fit the certificate, or cannot be read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tls-bad-'));
    const other = await selfSignedCertificate();
    writeFileSync(join(dir, 'other.key'), other.key);
    writeFileSync(join(dir, 'cert.pem'), tls.cert);
    writeFileSync(join(dir, 'broken.key'), '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n');
    const files = (key: string) => ({ TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, key) });
    await expect(resolveTls(files('other.key'))).rejects.toThrow(/cannot be used together.*key values mismatch/);
    await expect(resolveTls(files('broken.key'))).rejects.toThrow(/cannot be used together: one is unreadable/);
  });

  it('refuses plain HTTP spoken to the TLS port', async () => {
    await expect(call(listeners.appUrl.replace('https:', 'http:') + '/health')).rejects.toThrow();
  });

  it('generates a self-signed certificate with a SHA-256 fingerprint when no files are given', async () => {
    const generated = await resolveTls({ TLS_CERT_FILE: undefined, TLS_KEY_FILE: undefined });
    expect(generated.selfSigned).toBe(true);
    expect(generated.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(generated.fingerprint256).not.toBe(tls.fingerprint256);
  });
});

describe('plain HTTP_PORT listener', () => {
  it('redirects every request to HTTPS with 308, keeping host, path and query', async () => {
    const appPort = new URL(listeners.appUrl).port;
    expect(listeners.redirectPort).toBe(redirectPort);
    for (const [method, path] of [
      ['GET', '/health'],
      ['POST', '/predict?x=1'],
    ] as const) {
      const res = await call(`http://127.0.0.1:${redirectPort}${path}`, { method });
      expect(res.status).toBe(308);
      expect(res.headers.location).toBe(`https://127.0.0.1:${appPort}${path}`);
      expect(JSON.parse(res.body)).toEqual({ detail: `Use HTTPS: https://127.0.0.1:${appPort}${path}`, code: 'use_https' });
    }
  });

  /** An app with its own redirect listener, configured by `env`; `send` calls that listener. */
  async function withRedirect(env: Record<string, string>, send: (port: number) => Promise<void>): Promise<void> {
    const port = await freePort();
    const app = await startTestApp({ tls, scorer: t.scorer, env: { HTTP_PORT: String(port), TLS_MODE: 'on', ...env } });
    const own = await startListeners({ app: app.app, metricsServer: undefined, config: app.config });
    try {
      await send(port);
    } finally {
      await own.close();
      await app.close();
    }
  }

  it('answers framing it cannot read as the API port does: {detail, code}, then closes', async () => {
    const exchange = (request: string) =>
      new Promise<string>((resolve) => {
        const socket = connect(redirectPort, '127.0.0.1', () => socket.write(request));
        let raw = '';
        socket.on('data', (d: Buffer) => (raw += d.toString('latin1')));
        socket.on('error', () => {});
        socket.on('close', () => resolve(raw));
      });
    const badLength = await exchange('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    expect(badLength.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(badLength.split('\r\n\r\n')[1] ?? '')).toEqual({ detail: 'Bad request', code: 'bad_request' });
    const bigHeaders = await exchange(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(bigHeaders.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(JSON.parse(bigHeaders.split('\r\n\r\n')[1] ?? '')).toEqual({ detail: 'Request headers too large', code: 'headers_too_large' });
  });

  it('sends clients to PUBLIC_HTTPS_PORT when set (the port compose publishes or the Service exposes)', async () => {
    for (const [publicPort, expected] of [
      ['443', 'https://127.0.0.1/health'],
      ['9443', 'https://127.0.0.1:9443/health'],
    ] as const) {
      await withRedirect({ PUBLIC_HTTPS_PORT: publicPort }, async (port) => {
        const res = await call(`http://127.0.0.1:${port}/health`, { method: 'GET' });
        expect(res.status).toBe(308);
        expect(res.headers.location).toBe(expected);
      });
    }
  });

  it('never builds a redirect target from a hostile Host header', () => {
    expect(httpsLocation('evil.example/x', '/', 8443)).toBeUndefined();
    expect(httpsLocation('a.example:8080', '//evil.example/', 8443)).toBe('https://a.example:8443/');
    expect(httpsLocation('a.example', '/p', 443)).toBe('https://a.example/p');
    // PUBLIC_HOST takes the Host header out of the answer altogether.
    expect(httpsLocation('evil.example', '/p?q=1', 8443, 'risk.example')).toBe('https://risk.example:8443/p?q=1');
    expect(httpsLocation('evil.example/x?', '/p', 443, 'risk.example')).toBe('https://risk.example/p');
    // The port the client spoke plain HTTP to is never the HTTPS one.
    expect(httpsLocation('a.example:80', '/p', 443)).toBe('https://a.example/p');
  });

  it('sends every client to PUBLIC_HOST when set, whatever its Host header, in an answer no cache keeps', async () => {
    await withRedirect({ PUBLIC_HTTPS_PORT: '443', PUBLIC_HOST: 'risk.example' }, async (port) => {
      const res = await call(`http://127.0.0.1:${port}/predict?x=1`, { method: 'GET', headers: { host: 'evil.example' } });
      expect(res.status).toBe(308);
      expect(res.headers.location).toBe('https://risk.example/predict?x=1');
      expect(res.headers['cache-control']).toBe('no-store');
    });
  });
});

describe('TLS_MODE=off behind a proxy', () => {
  it('redirects with 308 and the HTTP port\'s use_https body when the trusted proxy says the request came over http, and serves it over https', async () => {
    const behind = await startTestApp({ env: { TLS_MODE: 'off', TRUST_PROXY: '127.0.0.1' }, scorer: t.scorer });
    try {
      const viaHttp = await behind.app.inject({
        method: 'GET',
        url: '/health?a=b',
        headers: { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'risk.example' },
      });
      expect(viaHttp.statusCode).toBe(308);
      expect(viaHttp.headers.location).toBe('https://risk.example/health?a=b');
      // The same answer as the plain-HTTP port's redirect.
      expect(viaHttp.json()).toEqual({ detail: 'Use HTTPS: https://risk.example/health?a=b', code: 'use_https' });
      const viaHttps = await behind.app.inject({ method: 'GET', url: '/health', headers: { 'x-forwarded-proto': 'https' } });
      expect(viaHttps.statusCode).toBe(200);
      const direct = await behind.app.inject({ method: 'GET', url: '/health' });
      expect(direct.statusCode).toBe(200);
    } finally {
      await behind.close();
    }
  });

  it('answers 400 to a Host that is no plain host name, and uses PUBLIC_HOST when set', async () => {
    const hostile = { 'x-forwarded-proto': 'http', host: 'evil.example/x?' };
    const behind = await startTestApp({ env: { TLS_MODE: 'off', TRUST_PROXY: '127.0.0.1' }, scorer: t.scorer });
    const pinned = await startTestApp({ env: { TLS_MODE: 'off', TRUST_PROXY: '127.0.0.1', PUBLIC_HOST: 'risk.example' }, scorer: t.scorer });
    try {
      const res = await behind.app.inject({ method: 'GET', url: '/health', headers: hostile });
      expect(res.statusCode).toBe(400);
      expect(res.json().detail).toBe('Host header required');
      for (const headers of [hostile, { 'x-forwarded-proto': 'http', 'x-forwarded-host': 'evil.example' }]) {
        const moved = await pinned.app.inject({ method: 'GET', url: '/health', headers });
        expect(moved.statusCode).toBe(308);
        expect(moved.headers.location).toBe('https://risk.example/health');
        expect(moved.headers['cache-control']).toBe('no-store');
      }
    } finally {
      await behind.close();
      await pinned.close();
    }
  });

  it('ignores X-Forwarded-Proto from an untrusted address', async () => {
    const behind = await startTestApp({ env: { TLS_MODE: 'off', TRUST_PROXY: '10.1.1.1' }, scorer: t.scorer });
    try {
      const res = await behind.app.inject({ method: 'GET', url: '/health', headers: { 'x-forwarded-proto': 'http' } });
      expect(res.statusCode).toBe(200);
    } finally {
      await behind.close();
    }
  });
});
