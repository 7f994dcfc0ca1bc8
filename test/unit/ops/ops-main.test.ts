// The process as operators run it: a model that cannot load leaves it up and degraded, not dead.
import { describe, expect, it } from 'vitest';
import { bearer } from '../../helpers/app.ts';
import { startServerProcess } from '../../helpers/process.ts';

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
});
