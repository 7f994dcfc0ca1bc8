// A renewed certificate is served without a restart: the process reads TLS_CERT_FILE and TLS_KEY_FILE
// again every TLS_RELOAD_INTERVAL_MS, serves a new usable pair from the next handshake, keeps the old
// one when the new pair cannot be used, and exports the served certificate's expiry as a metric.
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeTls, selfSignedCertificate, type TlsMaterial } from '../../../src/http/listeners.ts';
import { freePort } from '../../helpers/app.ts';
import { startServerProcess, type ServerProcess } from '../../helpers/process.ts';
import { until } from '../../helpers/wait.ts';

/** The SHA-256 fingerprint a fresh TLS connection to `url` is shown. */
function servedFingerprint(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/livez`, { rejectUnauthorized: false, agent: false }, (res) => {
      resolve((res.socket as TLSSocket).getPeerCertificate().fingerprint256);
      res.resume();
    });
    req.on('error', reject);
    req.end();
  });
}

/** Writes both files the way a secret volume does: whole files appear at once (rename). */
function install(dir: string, pair: TlsMaterial): void {
  for (const [name, pem] of [['cert.pem', pair.cert], ['key.pem', pair.key]] as const) {
    writeFileSync(join(dir, `.${name}.tmp`), pem);
    renameSync(join(dir, `.${name}.tmp`), join(dir, name));
  }
}

const expiryMetric = async (metricsPort: number): Promise<number> => {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return Number(/^conversation_risk_tls_certificate_expiry_timestamp_seconds (\d+)$/m.exec(text)?.[1]);
};

let dir: string;
let first: TlsMaterial;
let server: ServerProcess;
let metricsPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tls-reload-'));
  first = await selfSignedCertificate();
  install(dir, first);
  metricsPort = await freePort();
  server = await startServerProcess({
    TLS_MODE: 'on',
    TLS_CERT_FILE: join(dir, 'cert.pem'),
    TLS_KEY_FILE: join(dir, 'key.pem'),
    TLS_RELOAD_INTERVAL_MS: '200',
    METRICS_PORT: String(metricsPort),
    API_KEYS: 'reload-test-key-0123456789',
    MODEL_DIR: join(import.meta.dirname, '../../fixtures/contract-model'),
  });
});
afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
});

describe('certificate reload', () => {
  it('exports the served certificate expiry and serves a renewed pair from the next handshake, without a restart', async () => {
    const before = describeTls(first, false);
    expect(await servedFingerprint(server.url)).toBe(before.fingerprint256);
    expect(await expiryMetric(metricsPort)).toBe(Math.floor(before.notAfter.getTime() / 1000));

    const renewed = await selfSignedCertificate();
    const after = describeTls(renewed, false);
    install(dir, renewed);
    await until(async () => ((await servedFingerprint(server.url)) === after.fingerprint256 ? true : undefined), 10_000, 100);
    expect(await expiryMetric(metricsPort)).toBe(Math.floor(after.notAfter.getTime() / 1000));
    expect(server.stdout()).toContain(`"tls_fingerprint_sha256":"${after.fingerprint256}"`);
    expect(server.stdout()).toMatch(/"msg":"TLS certificate reloaded"/);
    expect(server.child.exitCode).toBeNull();
  });

  it('keeps serving the previous pair, and says so once, when the new files do not fit together (a renewal half written)', async () => {
    const served = await servedFingerprint(server.url);
    const other = await selfSignedCertificate();
    // A new certificate beside the old key: unusable until the key follows.
    writeFileSync(join(dir, 'cert.pem'), other.cert);
    await until(async () => (/still serving the previous certificate/.test(server.stdout()) ? true : undefined), 10_000, 100);
    await new Promise((r) => setTimeout(r, 600));
    expect(await servedFingerprint(server.url)).toBe(served);
    expect(server.stdout().match(/still serving the previous certificate/g)).toHaveLength(1);
    // The key follows: the pair is now served.
    writeFileSync(join(dir, 'key.pem'), other.key);
    const next = describeTls(other, false).fingerprint256;
    await until(async () => ((await servedFingerprint(server.url)) === next ? true : undefined), 10_000, 100);
    // Nothing of either key reaches the log.
    expect(server.stdout()).not.toContain('PRIVATE KEY');
  });
});
