// What Node's HTTP parser rejects before Fastify sees a request answers like every other error
// ({detail}, then the connection closes), and stalled connections are cut at REQUEST_TIMEOUT_MS:
// incomplete headers, an incomplete body and a TCP connection that never starts its TLS handshake.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate, startListeners, type Listeners } from '../../../src/http/listeners.ts';
import { startTestApp, TEST_KEY, type TestApp } from '../../helpers/app.ts';

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
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? '')?.[1]), body: body === undefined || body === '' ? undefined : JSON.parse(body) };
}

let plain: TestApp;
let plainListeners: Listeners;
let tlsApp: TestApp;
let tlsListeners: Listeners;
const portOf = (l: Listeners) => Number(new URL(l.appUrl).port);

beforeAll(async () => {
  plain = await startTestApp({ env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), TLS_MODE: 'off' } });
  plainListeners = await startListeners({ app: plain.app, metricsServer: undefined, config: plain.config });
  const pems = await selfSignedCertificate();
  tlsApp = await startTestApp({ scorer: plain.scorer, tls: { key: pems.key, cert: pems.cert }, env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), TLS_MODE: 'on' } });
  tlsListeners = await startListeners({ app: tlsApp.app, metricsServer: undefined, config: tlsApp.config });
});
afterAll(async () => {
  await tlsListeners.close();
  await plainListeners.close();
  await tlsApp.close();
  await plain.close();
});

describe('errors raised below Fastify answer {detail}', () => {
  it('a header block over the limit is a 431 with a detail', async () => {
    const { answer } = await exchange(portOf(plainListeners), [`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]);
    expect(statusAndBody(answer)).toEqual({ status: 431, body: { detail: 'Request headers too large' } });
  });

  it('bad framing (a Content-Length that is not a number) is a 400 with a detail', async () => {
    const { answer } = await exchange(portOf(plainListeners), ['POST /predict HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n']);
    expect(statusAndBody(answer)).toEqual({ status: 400, body: { detail: 'Bad request' } });
  });

  it('Expect: 100-continue then a malformed chunked body: the 100 is followed by a 400 with a detail, not a bare close', async () => {
    const { answer } = await exchange(portOf(plainListeners), ['POST /predict HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n']);
    expect(answer.startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
    expect(statusAndBody(answer.slice('HTTP/1.1 100 Continue\r\n\r\n'.length))).toEqual({ status: 400, body: { detail: 'Bad request' } });
  });
});

describe('stalled connections are cut at REQUEST_TIMEOUT_MS', () => {
  // Node checks its timers once per second here, so the cut lands within about a second of the timeout.
  const SLACK_MS = 1500;

  it('incomplete headers: a 408 with a detail, within the timeout', async () => {
    const r = await exchange(portOf(plainListeners), ['GET /health HTTP/1.1\r\nHost: x\r\n']);
    expect(statusAndBody(r.answer)).toEqual({ status: 408, body: { detail: 'Request timeout' } });
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

  it('a TCP connection that never starts its TLS handshake: closed within the timeout', async () => {
    const r = await exchange(portOf(tlsListeners), []);
    expect(r.closedAfterMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(r.closedAfterMs).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  });
});
