// Prometheus metrics on their own listener (METRICS_PORT), never on the public port, with one prefix.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverOptions, startListeners, type Listeners } from '../../../src/http/listeners.ts';
import { buildMetricsServer } from '../../../src/http/metrics-listener.ts';
import { bearer, chat, freePort, startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
let listeners: Listeners;
beforeAll(async () => {
  t = await startTestApp({ env: { TLS_MODE: 'off', RATE_LIMIT_MAX: '2', METRICS_PORT: String(await freePort()) } });
  listeners = await startListeners({ app: t.app, metricsServer: buildMetricsServer(t.metrics, serverOptions(t.config)), config: t.config });
});
afterAll(async () => {
  await listeners.close();
  await t.scorer.close();
});

const scrape = async () => {
  const res = await fetch(`http://127.0.0.1:${listeners.metricsPort}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
};

describe('the metrics port answers what it does not serve as the API port does', () => {
  const metricsUrl = (path: string) => `http://127.0.0.1:${listeners.metricsPort}${path}`;
  /** Writes `request` on a raw connection to the metrics port; resolves with all it got once closed. */
  const rawExchange = (request: string) =>
    new Promise<string>((resolve) => {
      const socket = connect(listeners.metricsPort ?? 0, '127.0.0.1', () => socket.write(request));
      let got = '';
      socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => resolve(got));
    });

  it('an unknown path is a 404 {detail, code} that echoes nothing of the URL', async () => {
    const res = await fetch(metricsUrl('/nope?secret=SECRET-QUERY'));
    expect(res.status).toBe(404);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ detail: 'Not found', code: 'not_found' });
    expect(body).not.toContain('SECRET');
  });

  it('another method on /metrics is a 405 naming the ones it serves', async () => {
    const res = await fetch(metricsUrl('/metrics'), { method: 'POST', body: '' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(await res.json()).toEqual({ detail: 'Method not allowed', code: 'method_not_allowed' });
  });

  it('a malformed percent-encoding is a 400 {detail, code} that echoes nothing of the URL', async () => {
    const raw = await rawExchange('GET /%zzSECRET HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(raw.split('\r\n\r\n')[1] ?? '')).toEqual({ detail: 'Malformed URL: invalid percent-encoding', code: 'malformed_url' });
    expect(raw).not.toContain('SECRET');
  });

  it('bad framing is a 400 {detail, code}, then the connection closes', async () => {
    const raw = await rawExchange('GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(raw.split('\r\n\r\n')[1] ?? '')).toEqual({ detail: 'Bad request', code: 'bad_request' });
  });
});

describe('metrics', () => {
  it('are served on the metrics port and not on the public port', async () => {
    expect(listeners.metricsPort).toBeGreaterThan(0);
    expect(new URL(listeners.appUrl).port).not.toBe(String(listeners.metricsPort));
    const pub = await fetch(`${listeners.appUrl}/metrics`);
    expect(pub.status).toBe(404);
    expect(await scrape()).toContain('conversation_risk_');
  });

  it('expose every required family, all under the conversation_risk_ prefix', async () => {
    await fetch(`${listeners.appUrl}/predict`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ conversation: chat(300) }),
    });
    for (let i = 0; i < 2; i++) {
      await fetch(`${listeners.appUrl}/batch_predict`, {
        method: 'POST',
        headers: { ...bearer(), 'content-type': 'application/json' },
        body: JSON.stringify({ conversations: [chat(2), chat(3)] }),
      });
    }
    const text = await scrape();
    const names = new Set([...text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]));
    for (const n of names) expect(n).toMatch(/^conversation_risk_/);
    for (const required of [
      'conversation_risk_http_requests_total',
      'conversation_risk_http_request_duration_seconds',
      'conversation_risk_inference_duration_seconds',
      'conversation_risk_segments_per_conversation',
      'conversation_risk_queue_depth',
      'conversation_risk_inference_in_flight',
      'conversation_risk_predictions_total',
      'conversation_risk_rate_limited_requests_total',
      'conversation_risk_model_loaded',
      'conversation_risk_model_info',
      'conversation_risk_process_resident_memory_bytes',
      'conversation_risk_nodejs_eventloop_lag_seconds',
    ]) {
      expect(names, required).toContain(required);
    }
    expect(text).toMatch(/conversation_risk_http_requests_total\{route="\/predict",method="POST",status="200"\} 1/);
    expect(text).toMatch(/conversation_risk_http_requests_total\{route="\/batch_predict",method="POST",status="429"\} 1/);
    expect(text).toMatch(/conversation_risk_rate_limited_requests_total 1/);
    expect(text).toMatch(/conversation_risk_model_loaded 1/);
    const m = t.scorer.manifest;
    expect(text).toContain(`conversation_risk_model_info{name="${m?.name}",version="${m?.version}"} 1`);
    // 1 + 2 conversations scored: the 429 batch never reached the engine.
    const scored = [...text.matchAll(/^conversation_risk_predictions_total\{[^}]*\} (\d+)/gm)].reduce((s, x) => s + Number(x[1]), 0);
    expect(scored).toBe(3);
    expect(text).toMatch(/conversation_risk_segments_per_conversation_count 3/);
    expect(text).toMatch(/conversation_risk_segments_per_conversation_bucket\{le="1"\} 2/);
    expect(text).toMatch(/conversation_risk_inference_duration_seconds_count [1-9]/);
  });

  it('with TLS_MODE=off say nothing of a certificate: no expiry series, which every alert on it would read as expired', async () => {
    expect(await scrape()).not.toContain('conversation_risk_tls_certificate_expiry_timestamp_seconds');
  });

  it('label unknown routes as unmatched, never with the requested path', async () => {
    await fetch(`${listeners.appUrl}/some/secret-looking/path`);
    const text = await scrape();
    expect(text).toContain('route="unmatched"');
    expect(text).not.toContain('secret-looking');
  });

  it('report model_loaded 0 and no model_info when the model is not loaded', async () => {
    const degraded = await startTestApp({ env: { MODEL_DIR: '/nonexistent' } });
    try {
      const text = await degraded.metrics.registry.metrics();
      expect(text).toMatch(/conversation_risk_model_loaded 0/);
      expect(text).not.toMatch(/conversation_risk_model_info\{/);
    } finally {
      await degraded.close();
    }
  });
});
