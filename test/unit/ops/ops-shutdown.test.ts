// SIGTERM on the real process: stop accepting, let the in-flight request finish, exit 0.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { bearer, chat, FIXTURE_MODEL_DIR, REPO_ROOT } from '../../helpers/app.ts';
import { startServerProcess } from '../../helpers/process.ts';
import { until } from '../../helpers/wait.ts';

describe('graceful shutdown', () => {
  it('finishes an in-flight request after SIGTERM, refuses new connections, and exits 0', async () => {
    const server = await startServerProcess({
      API_KEYS: 'shutdown-test-key',
      MODEL_DIR: FIXTURE_MODEL_DIR,
      SHUTDOWN_GRACE_MS: '20000',
    });
    const { child, url, exited } = server;
    const stdout = () => server.stdout();

    // The request is provably in flight at SIGTERM: half its body is sent before the signal and the
    // rest after it, so a server that dropped in-flight work could not pass by finishing early.
    const started = Date.now();
    const body = Buffer.from(JSON.stringify({ conversation: chat(9000).slice(0, 500_000) }));
    const req = request(`${url}/predict`, {
      method: 'POST',
      headers: { ...bearer('shutdown-test-key'), 'content-type': 'application/json', 'content-length': body.length },
    });
    const slow = new Promise<{ status: number; text: string }>((resolve, reject) => {
      req.once('error', reject);
      req.once('response', (r) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (text += c));
        r.once('end', () => resolve({ status: r.statusCode ?? 0, text }));
      });
    });
    const half = Math.floor(body.length / 2);
    await new Promise<void>((resolve) => req.write(body.subarray(0, half), () => resolve()));
    await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGTERM');
    await until(async () => (stdout().includes('shutting down') ? true : undefined), 10_000, 20);
    // While that request is still open (half its body unsent), a new connection is refused.
    const { port } = new URL(url);
    await until(async () => ((await connectOutcome(Number(port))) === 'ECONNREFUSED' ? true : undefined), 5_000, 20);
    req.end(body.subarray(half));

    const res = await slow;
    expect(res.status).toBe(200);
    expect((JSON.parse(res.text) as { num_segments: number }).num_segments).toBeGreaterThan(1);
    expect(await exited).toBe(0);
    // The request really was in flight when the signal came (it finished after shutdown began).
    expect(stdout().indexOf('shutting down')).toBeLessThan(stdout().lastIndexOf('"route":"/predict"'));
    expect(stdout()).toContain('shutdown complete');
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe('a stop signal during start-up', () => {
  // "starting" is logged before the keys, TLS and the model's load, "loading model" as the workers start
  // loading their native libraries (where exiting at once aborted the process: SIGABRT). Two workers
  // load in about 500 ms on a 2-core machine, so each signal comes well inside the load.
  it.each([
    ['starting', 0],
    ['loading model', 0],
    ['loading model', 120],
    ['loading model', 240],
  ])('the signal at "%s" + %i ms: exit 0, not an abort, and it never listens', async (line, delayMs) => {
    const child = spawn(process.execPath, ['src/main.ts'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', HTTP_PORT: '0', METRICS_PORT: '0', TLS_MODE: 'off', WORKERS: '2', API_KEYS: 'startup-signal-test-key', MODEL_DIR: path.join(REPO_ROOT, 'models/conversation-risk') },
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await until(async () => (stdout.includes(`"${line}"`) ? true : undefined), 20_000, 5);
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    child.kill('SIGTERM');
    const started = Date.now();
    const { code, signal } = await exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(stdout).toContain('stopped during start-up');
    expect(stdout).not.toContain('"listening"');
  });

  it('is handled from the first moment: the entry statically imports only the signal watcher, and loads the service after it', () => {
    const entry = readFileSync(path.join(REPO_ROOT, 'src/main.ts'), 'utf8');
    expect([...entry.matchAll(/^import\s.*from\s+'([^']+)'/gm)].map((m) => m[1])).toEqual(['./ops/stop-signals.ts']);
    expect(entry.indexOf('watchStopSignals()')).toBeLessThan(entry.indexOf("await import('./serve.ts')"));
    // The watcher itself loads nothing.
    expect(readFileSync(path.join(REPO_ROOT, 'src/ops/stop-signals.ts'), 'utf8')).not.toMatch(/^import\s/m);
  });
});

describe('a second stop signal during the graceful shutdown', () => {
  it('exits 1 at once, cutting the request in flight, and the log says so', async () => {
    const server = await startServerProcess({ API_KEYS: 'shutdown-test-key', MODEL_DIR: FIXTURE_MODEL_DIR, SHUTDOWN_GRACE_MS: '20000' });
    const { child, url, exited } = server;
    // A request whose body is half sent holds the shutdown open.
    const body = Buffer.from(JSON.stringify({ conversation: chat(50) }));
    const req = request(`${url}/predict`, { method: 'POST', headers: { ...bearer('shutdown-test-key'), 'content-type': 'application/json', 'content-length': body.length } });
    req.on('error', () => {});
    await new Promise<void>((resolve) => req.write(body.subarray(0, 10), () => resolve()));
    await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGTERM');
    await until(async () => (server.stdout().includes('shutting down') ? true : undefined), 10_000, 20);
    const started = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(server.stdout()).toContain('second stop signal: exiting now');
  });
});

/** 'connected', or the error code a TCP connect to the loopback port ended with. */
function connectOutcome(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}
