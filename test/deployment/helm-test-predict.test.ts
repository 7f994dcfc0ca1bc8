// The chart's `helm test` script (helm/conversation-risk/files/helm-test-predict.mjs) run as the test
// pod runs it, against the real service over TLS on loopback: a certificate issued by a test CA for the
// Service's DNS name, the keys file as the chart mounts it. No cluster is needed: the pod's wiring
// (which Secret items land where) is checked on the rendered chart in helm-render.test.ts.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_MODEL_DIR, REPO_ROOT } from '../helpers/app.ts';
import { startServerProcess, type ServerProcess } from '../helpers/process.ts';

const SCRIPT = path.join(REPO_ROOT, 'helm/conversation-risk/files/helm-test-predict.mjs');
const HOST = 'risk-conversation-risk.trust-safety.svc';
const KEY = 'helm-test-key-0123456789abcdef0123';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let dir = '';
let server: ServerProcess | undefined;
let port = '';
const file = (name: string) => path.join(dir, name);

/** A CA (key and certificate) and, with `leafOf`, a server certificate for HOST signed by it. */
function makeCa(name: string): void {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-subj', `/CN=${name}`, '-keyout', file(`${name}.key`), '-out', file(`${name}.crt`)], { stdio: 'pipe' });
}
function makeLeaf(ca: string): void {
  writeFileSync(file('leaf.ext'), `subjectAltName=DNS:${HOST}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  execFileSync('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${HOST}`,
    '-keyout', file('tls.key'), '-out', file('tls.csr')], { stdio: 'pipe' });
  execFileSync('openssl', ['x509', '-req', '-in', file('tls.csr'), '-CA', file(`${ca}.crt`), '-CAkey', file(`${ca}.key`),
    '-CAcreateserial', '-days', '2', '-extfile', file('leaf.ext'), '-out', file('tls.crt')], { stdio: 'pipe' });
}

interface Run {
  code: number;
  out: string;
}
/** The script as the pod runs it: its env, files at the paths the chart mounts them under. */
async function runScript(env: Record<string, string>): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [SCRIPT], {
      env: { PATH: process.env.PATH ?? '', TEST_SCHEME: 'https', TEST_HOST: '127.0.0.1', TEST_PORT: port, TEST_SERVER_NAME: HOST, ...env },
      timeout: 30_000,
    });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'helm-test-predict-'));
  makeCa('ca');
  makeCa('other-ca');
  makeLeaf('ca');
  // A keys file as operators write it: a comment, a hashed key, then a plaintext one.
  writeFileSync(file('keys'), `# clients\nsha256:${sha256('another-client-key-0123456789')}\n${KEY}\n`);
  writeFileSync(file('hashed-keys'), `sha256:${sha256(KEY)}\n`);
  writeFileSync(file('wrong-key'), 'not-the-key-0123456789abcdef012345\n');
  server = await startServerProcess({
    TLS_MODE: 'on',
    TLS_CERT_FILE: file('tls.crt'),
    TLS_KEY_FILE: file('tls.key'),
    API_KEYS: KEY,
    MODEL_DIR: FIXTURE_MODEL_DIR,
  });
  port = new URL(server.url).port;
}, 120_000);

afterAll(async () => {
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('helm test script (files/helm-test-predict.mjs) against the real service over TLS', () => {
  it('scores the fixture chat with the first plaintext key, the certificate verified against ca.crt', async () => {
    const run = await runScript({ API_KEYS_FILE: file('keys'), TLS_CA_FILE: file('ca.crt'), TLS_CERT_FILE: file('tls.crt') });
    expect(run.code, run.out).toBe(0);
    expect(run.out).toMatch(new RegExp(`^PASS https://127\\.0\\.0\\.1:${port}/predict -> 200, harmful_score 0?\\.?[0-9.e-]+, risk_level [A-Za-z ]+; certificate verified for ${HOST.replaceAll('.', '\\.')} against CA `, 'm'));
    expect(run.out).not.toMatch(/WARNING/);
  });

  it('pins the served certificate (tls.crt) when the Secret has no ca.crt', async () => {
    const run = await runScript({ API_KEYS_FILE: file('keys'), TLS_CA_FILE: file('absent-ca.crt'), TLS_CERT_FILE: file('tls.crt') });
    expect(run.code, run.out).toBe(0);
    expect(run.out).toMatch(/certificate verified for \S+ against the served certificate/);
  });

  it('fails on a certificate the CA did not issue', async () => {
    const run = await runScript({ API_KEYS_FILE: file('keys'), TLS_CA_FILE: file('other-ca.crt'), TLS_CERT_FILE: file('other-ca.crt') });
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/^FAIL .*(UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify)/m);
  });

  it('fails when the certificate does not hold the name asked for', async () => {
    const run = await runScript({ API_KEYS_FILE: file('keys'), TLS_CA_FILE: file('ca.crt'), TEST_SERVER_NAME: 'risk.elsewhere.example' });
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/^FAIL .*ERR_TLS_CERT_ALTNAME_INVALID/m);
  });

  it('fails with the service\'s answer on a key it does not accept', async () => {
    const run = await runScript({ API_KEYS_FILE: file('wrong-key'), TLS_CA_FILE: file('ca.crt') });
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/^FAIL .*HTTP 403: \{"detail":"Invalid API key","code":"invalid_api_key"\}/m);
  });

  it('fails, naming tests.apiKey.existingSecret, when every key is a sha256: hash', async () => {
    const run = await runScript({ API_KEYS_FILE: file('hashed-keys'), TLS_CA_FILE: file('ca.crt') });
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/all sha256: hashes.*set tests\.apiKey\.existingSecret/);
  });

  it('with no TLS Secret (self-signed pods) scores but says the certificate is not verified', async () => {
    const run = await runScript({ API_KEYS_FILE: file('keys') });
    expect(run.code, run.out).toBe(0);
    expect(run.out).toMatch(/^WARNING: certificate NOT verified: no TLS Secret/m);
    expect(run.out).toMatch(/^PASS .*certificate NOT verified/m);
  });
});
