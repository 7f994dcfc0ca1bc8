// SIGTERM on the real process: stop accepting, let the in-flight request finish, exit 0.
import { spawn } from 'node:child_process';
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

    // A long conversation keeps the worker busy for a while.
    const started = Date.now();
    const slow = fetch(`${url}/predict`, {
      method: 'POST',
      headers: { ...bearer('shutdown-test-key'), 'content-type': 'application/json' },
      body: JSON.stringify({ conversation: chat(9000).slice(0, 500_000) }),
    });
    // Wait until the request is being scored, then ask the process to stop.
    await new Promise((r) => setTimeout(r, 150));
    child.kill('SIGTERM');

    const res = await slow;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { num_segments: number }).num_segments).toBeGreaterThan(1);
    expect(await exited).toBe(0);
    // The request really was in flight when the signal came (it finished after shutdown began).
    expect(stdout.indexOf('shutting down')).toBeLessThan(stdout.lastIndexOf('"route":"/predict"'));
    expect(stdout).toContain('shutdown complete');
    expect(Date.now() - started).toBeLessThan(20_000);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });
});
