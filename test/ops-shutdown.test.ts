// SIGTERM on the real process: stop accepting, let the in-flight request finish, exit 0.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { bearer, chat, FIXTURE_MODEL_DIR, REPO_ROOT } from './helpers/app.ts';

describe('graceful shutdown', () => {
  it('finishes an in-flight request after SIGTERM, refuses new connections, and exits 0', async () => {
    const child = spawn(process.execPath, ['src/main.ts'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: '0',
        HTTP_PORT: '0',
        METRICS_PORT: '0',
        TLS_MODE: 'off',
        API_KEYS: 'shutdown-test-key',
        MODEL_DIR: FIXTURE_MODEL_DIR,
        WORKERS: '1',
        SHUTDOWN_GRACE_MS: '20000',
      },
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', () => {});
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start: ${stdout}`)), 60_000);
      child.stdout.on('data', () => {
        const m = /"url":"(http:\/\/[^"]+)".*"msg":"listening"/.exec(stdout);
        if (m?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });

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
    await waitFor(() => stdout.includes('shutting down'), 10_000);
    req.end(body.subarray(half));

    const res = await slow;
    expect(res.status).toBe(200);
    expect((JSON.parse(res.text) as { num_segments: number }).num_segments).toBeGreaterThan(1);
    expect(await exited).toBe(0);
    // The request really was in flight when the signal came (it finished after shutdown began).
    expect(stdout.indexOf('shutting down')).toBeLessThan(stdout.lastIndexOf('"route":"/predict"'));
    expect(stdout).toContain('shutdown complete');
    expect(Date.now() - started).toBeLessThan(20_000);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });
});

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
