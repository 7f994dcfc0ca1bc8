// What Node's HTTP parser or Fastify's router rejects before a route sees a request answers like every
// other error ({detail, code}, echoing nothing of the request); framing the appliance does not decode is
// refused and the connection closed; stalled connections are cut at REQUEST_TIMEOUT_MS (incomplete
// headers, an incomplete body, a TCP connection that never starts its TLS handshake, on the API and
// the metrics port) and idle keep-alive connections at KEEP_ALIVE_TIMEOUT_MS.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { selfSignedCertificate, serverOptions, startListeners, type Listeners } from '../../../src/http/listeners.ts';
import { buildMetricsServer } from '../../../src/http/metrics-listener.ts';
import { captureLogs, startTestApp, TEST_KEY, type TestApp } from '../../helpers/app.ts';

const TIMEOUT_MS = 1500;

interface Exchange {
  /** Everything the server wrote before it closed the connection. */
  answer: string;
  /** Milliseconds from connecting to the close. */
  closedAfterMs: number;
}

/** Connects, writes `chunks` (a string or several with pauses), and waits for the server to close. */
function exchange(port: number, chunks: string[], pauseMs = 0): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket: Socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
    socket.on('connect', async () => {
      for (const c of chunks) {
        if (socket.destroyed) break;
        socket.write(c);
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
    });
    setTimeout(() => reject(new Error('the server never closed the connection')), 30_000);
  });
}

function statusAndBody(answer: string): { status: number; body: unknown } {
  const [head, body] = answer.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head ?? '')?.[1]), body: body === undefined || body === '' ? undefined : JSON.parse(body) };
}

/** The answer's header block, lower-cased. */
const headOf = (answer: string) => (answer.split('\r\n\r\n')[0] ?? '').toLowerCase();

let plain: TestApp;
let plainListeners: Listeners;
let tlsApp: TestApp;
let tlsListeners: Listeners;
let metricsServer: FastifyInstance;
let metricsPort: number;
const portOf = (l: Listeners) => Number(new URL(l.appUrl).port);

beforeAll(async () => {
  plain = await startTestApp({ env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), TLS_MODE: 'off' } });
  plainListeners = await startListeners({ app: plain.app, metricsServer: undefined, config: plain.config });
  const pems = await selfSignedCertificate();
  tlsApp = await startTestApp({ scorer: plain.scorer, tls: { key: pems.key, cert: pems.cert }, env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), TLS_MODE: 'on' } });
  tlsListeners = await startListeners({ app: tlsApp.app, metricsServer: undefined, config: tlsApp.config });
  metricsServer = buildMetricsServer(plain.metrics, serverOptions(plain.config));
  await metricsServer.listen({ host: '127.0.0.1', port: 0 });
  const a = metricsServer.server.address();
  metricsPort = typeof a === 'object' && a !== null ? a.port : 0;
});
afterAll(async () => {
  await metricsServer.close();
  await tlsListeners.close();
  await plainListeners.close();
  await tlsApp.close();
  await plain.close();
});

describe('errors raised below Fastify answer {detail, code}', () => {
  it('a header block over the limit is a 431 with a detail', async () => {
    const { answer } = await exchange(portOf(plainListeners), [`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]);
    expect(statusAndBody(answer)).toEqual({ status: 431, body: { detail: 'Request headers too large', code: 'headers_too_large' } });
  });

  it('bad framing (a Content-Length that is not a number) is a 400 with a detail', async () => {
    const { answer } = await exchange(portOf(plainListeners), ['POST /predict HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n']);
    expect(statusAndBody(answer)).toEqual({ status: 400, body: { detail: 'Bad request', code: 'bad_request' } });
  });

  it('Expect: 100-continue then a malformed chunked body: the 100 is followed by a 400 with a detail, not a bare close', async () => {
    const { answer } = await exchange(portOf(plainListeners), ['POST /predict HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n']);
    expect(answer.startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
    expect(statusAndBody(answer.slice('HTTP/1.1 100 Continue\r\n\r\n'.length))).toEqual({ status: 400, body: { detail: 'Bad request', code: 'bad_request' } });
  });
});

describe('an Expect header other than 100-continue', () => {
  it.each([
    ['the API port', () => portOf(plainListeners)],
    ['the metrics port', () => metricsPort],
  ])('on %s is a 417 with a detail', async (_name, port) => {
    const { answer } = await exchange(port(), ['POST /predict HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}']);
    expect(statusAndBody(answer)).toEqual({ status: 417, body: { detail: 'Expect: only 100-continue is supported; send the request without it', code: 'expectation_failed' } });
  });
});

describe("errors raised by Fastify's router answer {detail, code} and echo nothing of the URL", () => {
  it('a malformed percent-encoding is a 400 with a detail', async () => {
    const { answer } = await exchange(portOf(plainListeners), ['GET /v2/predict/batch/%zzSECRET HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
    expect(statusAndBody(answer)).toEqual({ status: 400, body: { detail: 'Malformed URL: invalid percent-encoding', code: 'malformed_url' } });
    expect(answer).not.toContain('SECRET');
  });

  it('a path parameter over 100 characters (a 200-character job id) is a 414 with a detail', async () => {
    const id = `SECRET${'a'.repeat(194)}`;
    const { answer } = await exchange(portOf(plainListeners), [`GET /v2/predict/batch/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nConnection: close\r\n\r\n`]);
    expect(statusAndBody(answer)).toEqual({ status: 414, body: { detail: 'URI too long', code: 'uri_too_long' } });
    expect(answer).not.toContain('SECRET');
  });
});

describe('framing the appliance does not decode is refused before authentication, and the connection closed', () => {
  const post = (head: string, body: string) => [`POST /predict ${head}\r\nContent-Type: application/json\r\n${body}`];

  it.each([
    ['Transfer-Encoding other than chunked alone', 'HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked', '\r\n5\r\nhello\r\n0\r\n\r\n', 400, 'Transfer-Encoding must be chunked alone', 'transfer_encoding_not_chunked'],
    ['Transfer-Encoding on HTTP/1.0', 'HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked', '\r\n2\r\n{}\r\n0\r\n\r\n', 400, 'Transfer-Encoding is not allowed on HTTP/1.0: send Content-Length', 'transfer_encoding_http10'],
    ['a compressed body (Content-Encoding: gzip)', 'HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: 2', '\r\n{}', 415, 'Content-Encoding is not supported: send the body uncompressed', 'content_encoding_unsupported'],
    ['an HTTP/1.1 request without Host', 'HTTP/1.1\r\nContent-Length: 2', '\r\n{}', 400, 'Host header required', 'host_required'],
  ])('%s: answered with its status and a detail, and the server closes at once', async (_name, head, body, status, detail, code) => {
    const r = await exchange(portOf(plainListeners), post(head, body));
    expect(statusAndBody(r.answer)).toEqual({ status, body: { detail, code } });
    expect(headOf(r.answer)).toContain('connection: close');
    expect(r.closedAfterMs).toBeLessThan(TIMEOUT_MS);
  });

  it('an HTTP/1.0 request without Host is answered (Host is optional there)', async () => {
    const { answer } = await exchange(portOf(plainListeners), ['GET /livez HTTP/1.0\r\n\r\n']);
    expect(statusAndBody(answer)).toEqual({ status: 200, body: { status: 'alive' } });
  });

  it('Content-Encoding: identity is accepted as no encoding', async () => {
    const { answer } = await exchange(portOf(plainListeners), post(`HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nConnection: close\r\nContent-Encoding: identity\r\nContent-Length: 2`, '\r\n{}'));
    expect(statusAndBody(answer)).toEqual({ status: 422, body: { detail: 'conversation: is required', code: 'invalid_field' } });
  });
});

describe('requests pipelined behind an answer that closes the connection', () => {
  it('a malformed body answers 422 with Connection: close; the 30 requests behind it are not scored, and one log line says so', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const { logger, lines } = captureLogs('info');
    const t = await startTestApp({ logger, scorer: plain.scorer, env: { TLS_MODE: 'off', RATE_LIMIT_MAX: '1000' } });
    const l = await startListeners({ app: t.app, metricsServer: undefined, config: t.config });
    try {
      const good = JSON.stringify({ conversation: 'user1: hi there\nuser2: hello '.repeat(200) });
      const req = (body: string) =>
        `POST /predict HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const r = await exchange(portOf(l), [req('{"conversation": bad') + Array.from({ length: 30 }, () => req(good)).join('')]);
      expect(r.answer.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 422']);
      expect(headOf(r.answer)).toContain('connection: close');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const logged = lines.map((line) => JSON.parse(line) as { msg: string; scoring_error?: string; dropped_requests?: number });
      // Not 30 scoring timeouts: one line for the connection, naming how many requests went unanswered.
      expect(logged.filter((x) => x.scoring_error !== undefined)).toEqual([]);
      expect(logged.filter((x) => x.dropped_requests !== undefined)).toEqual([expect.objectContaining({ dropped_requests: 30 })]);
      expect(await t.metrics.registry.getSingleMetricAsString('conversation_risk_predictions_total')).not.toMatch(/risk_level=/);
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
      await l.close();
      await t.app.close();
    }
  });
});

describe('idle keep-alive connections are cut at KEEP_ALIVE_TIMEOUT_MS, by default no later than REQUEST_TIMEOUT_MS', () => {
  // Node holds the socket 1 s past the advertised timeout (keepAliveTimeoutBuffer), so a client that
  // reuses it at the last moment is not reset; the advertised figure is what clients plan with.
  const NODE_BUFFER_MS = 1000;
  const SLACK_MS = 500;
  it('a keep-alive connection left idle after one /health is closed within the request timeout', async () => {
    const r = await exchange(portOf(plainListeners), ['GET /health HTTP/1.1\r\nHost: x\r\n\r\n']);
    expect(statusAndBody(r.answer).status).toBe(200);
    expect(headOf(r.answer)).toContain(`keep-alive: timeout=${Math.floor(TIMEOUT_MS / 1000)}`);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(r.closedAfterMs).toBeLessThan(TIMEOUT_MS + NODE_BUFFER_MS + SLACK_MS);
  });

  it('the same on the metrics port', async () => {
    const r = await exchange(metricsPort, ['GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n']);
    expect(statusAndBody(r.answer.replace(/\r\n\r\n[\s\S]*/, '\r\n\r\n')).status).toBe(200);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(r.closedAfterMs).toBeLessThan(TIMEOUT_MS + NODE_BUFFER_MS + SLACK_MS);
  });
});

describe('stalled connections are cut at REQUEST_TIMEOUT_MS', () => {
  // Node checks its timers once per second here, so the cut lands within about a second of the timeout.
  const SLACK_MS = 1500;

  it('incomplete headers: a 408 with a detail, within the timeout', async () => {
    const r = await exchange(portOf(plainListeners), ['GET /health HTTP/1.1\r\nHost: x\r\n']);
    expect(statusAndBody(r.answer)).toEqual({ status: 408, body: { detail: 'Request timeout', code: 'request_timeout' } });
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(r.closedAfterMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  });

  it('an incomplete body: closed within the timeout', async () => {
    const r = await exchange(portOf(plainListeners), ['POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"conv']);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(r.closedAfterMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  });

  it('a body refused with 413 that then stalls: the 413 is the only answer, and the connection closes at the timeout', async () => {
    const r = await exchange(portOf(plainListeners), [
      `POST /predict HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{"conv`,
    ]);
    expect(r.answer.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(statusAndBody(r.answer).status).toBe(413);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(r.closedAfterMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  });

  it('incomplete headers on the metrics port (a slowloris): closed within the timeout', async () => {
    const r = await exchange(metricsPort, ['GET /metrics HTTP/1.1\r\nHost: x\r\n', 'X-a: 1\r\n'], 200);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(r.closedAfterMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  });

  it('a TCP connection that never starts its TLS handshake: closed within the timeout', async () => {
    const r = await exchange(portOf(tlsListeners), []);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(r.closedAfterMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  });
});
