// `helm test`: scores a fixture chat through the Service as a client would. POST /predict with the
// first plaintext API key of the mounted keys file, over TLS verified against the CA of the chart's
// TLS Secret (its ca.crt, or else the served certificate itself, tls.crt, pinned), for the Service's
// DNS name. Passes on 200 with a harmful_score in [0, 1]; anything else fails with the reason.
// Runs with the appliance image's node; no dependency but Node itself.
//
// Env: TEST_SCHEME (https|http), TEST_HOST, TEST_PORT, TEST_SERVER_NAME (name the certificate must
// hold; default TEST_HOST), API_KEYS_FILE, TLS_CA_FILE, TLS_CERT_FILE (both optional; neither: the
// pods serve self-signed certificates made at start, which nothing can verify: said, not hidden).
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';

const env = process.env;
const scheme = env.TEST_SCHEME === 'http' ? 'http' : 'https';
const host = env.TEST_HOST ?? '127.0.0.1';
const port = Number(env.TEST_PORT ?? (scheme === 'https' ? 443 : 80));
const serverName = env.TEST_SERVER_NAME || host;
const target = `${scheme}://${host}:${port}/predict`;

function fail(message) {
  console.log(`FAIL ${target}: ${message}`);
  process.exit(1);
}

/** The first entry of the keys file that is a key, not a comment, a blank line or a sha256: hash. */
function plaintextKey(file) {
  if (!file || !existsSync(file)) fail(`no API keys file at ${file}`);
  const entries = readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const key = entries.find((e) => !e.toLowerCase().startsWith('sha256:'));
  if (key === undefined) {
    fail(
      `${file} holds ${entries.length} key(s), all sha256: hashes, so no plaintext key is in the cluster: ` +
        'set tests.apiKey.existingSecret to a Secret holding one plaintext key',
    );
  }
  return key;
}

/** Trust anchors: the CA file when it holds certificates, else the served chain itself (pinned). */
function trust() {
  const read = (file) => (file && existsSync(file) ? readFileSync(file, 'utf8') : '');
  const ca = read(env.TLS_CA_FILE);
  if (ca.includes('BEGIN CERTIFICATE')) return { ca, how: `CA ${env.TLS_CA_FILE}` };
  const served = read(env.TLS_CERT_FILE);
  if (served.includes('BEGIN CERTIFICATE')) {
    // The certificate the pods serve, and the public roots for one a public CA issued. Partial chains:
    // the leaf itself (or an intermediate of tls.crt) is an anchor, so no ca.crt is needed to pin it.
    return { ca: [...tls.rootCertificates, served], allowPartialTrustChain: true, how: `the served certificate ${env.TLS_CERT_FILE} (no ca.crt in the Secret)` };
  }
  return undefined;
}

const key = plaintextKey(env.API_KEYS_FILE);
const body = JSON.stringify({
  conversation: 'alex: hi, how was the match?\nsam: we won 2-1\nalex: great, see you at practice on monday\nsam: see you',
});
const options = {
  host,
  port,
  path: '/predict',
  method: 'POST',
  timeout: 20_000,
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
};
let verified = 'plain HTTP (tls.enabled is false)';
if (scheme === 'https') {
  const anchors = trust();
  options.servername = serverName;
  if (anchors === undefined) {
    options.rejectUnauthorized = false;
    verified = 'certificate NOT verified: no TLS Secret (tls.existingSecret or tls.certManager), so each pod serves a self-signed certificate made at start';
    console.log(`WARNING: ${verified}`);
  } else {
    options.ca = anchors.ca;
    options.allowPartialTrustChain = anchors.allowPartialTrustChain ?? false;
    options.rejectUnauthorized = true;
    verified = `certificate verified for ${serverName} against ${anchors.how}`;
  }
}

const req = (scheme === 'https' ? https : http).request(options, (res) => {
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (chunk) => (text += chunk));
  res.on('end', () => {
    if (res.statusCode !== 200) fail(`HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
    let answer;
    try {
      answer = JSON.parse(text);
    } catch {
      fail(`the answer is not JSON: ${text.slice(0, 300)}`);
    }
    const score = answer?.harmful_score;
    if (typeof score !== 'number' || !(score >= 0 && score <= 1)) fail(`no harmful_score in [0, 1]: ${text.slice(0, 300)}`);
    console.log(`PASS ${target} -> 200, harmful_score ${score}, risk_level ${answer.risk_level}; ${verified}`);
    process.exit(0);
  });
});
req.on('timeout', () => req.destroy(new Error('no answer within 20 s')));
req.on('error', (err) => fail(`${err.code ?? ''} ${err.message}`.trim()));
req.end(body);
