// The process as operators run it: a model that cannot load leaves it up and degraded, not dead.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bearer } from '../../helpers/app.ts';
import { packageWithSlowTokenizer } from '../../helpers/model-package.ts';
import { startServerProcess } from '../../helpers/process.ts';

const FIXTURE = join(import.meta.dirname, '../../fixtures/contract-model');

describe('node src/main.ts', () => {
  it('stays up with a missing model: /health degraded, /readyz 503, /predict 503, then exits 0 on SIGTERM', async () => {
    const server = await startServerProcess({ API_KEYS: 'degraded-key', MODEL_DIR: '/nonexistent/model' });
    const { url } = server;
    expect(server.stdout()).toMatch(/model not loaded: serving degraded/);
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'degraded' });
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    const res = await fetch(`${url}/predict`, {
      method: 'POST',
      headers: { ...bearer('degraded-key'), 'content-type': 'application/json' },
      body: JSON.stringify({ conversation: 'user1: hi' }),
    });
    expect(res.status).toBe(503);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });

  it('says in its "model loaded" line whether the tokenizer fast path is on, and warns when it is off', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'main-fast-'));
    try {
      for (const [modelDir, on] of [[FIXTURE, true], [packageWithSlowTokenizer(FIXTURE, dir), false]] as const) {
        const server = await startServerProcess({ API_KEYS: 'fast-path-key', MODEL_DIR: modelDir });
        const loaded = server.stdout().split('\n').find((l) => l.includes('"model loaded"'));
        expect(JSON.parse(loaded ?? '{}')).toMatchObject({ fast_tokenizer: on });
        expect(/fast path did not reproduce/.test(server.stdout())).toBe(!on);
        server.child.kill('SIGTERM');
        expect(await server.exited).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
