// The process as operators run it: a model that cannot load leaves it up and degraded, not dead.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bearer, REPO_ROOT } from './helpers/app.ts';

describe('node src/main.ts', () => {
  it('stays up with a missing model: /health degraded, /readyz 503, /predict 503, then exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, ['src/main.ts'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: '0',
        HTTP_PORT: '0',
        METRICS_PORT: '0',
        TLS_MODE: 'off',
        API_KEYS: 'degraded-key',
        MODEL_DIR: '/nonexistent/model',
        WORKERS: '1',
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
    expect(stdout).toMatch(/model not loaded: serving degraded/);
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'degraded' });
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    const res = await fetch(`${url}/predict`, {
      method: 'POST',
      headers: { ...bearer('degraded-key'), 'content-type': 'application/json' },
      body: JSON.stringify({ conversation: 'user1: hi' }),
    });
    expect(res.status).toBe(503);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
