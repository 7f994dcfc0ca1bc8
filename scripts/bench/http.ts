// The bench's HTTPS client for the server it starts: a free port, one request with a key (timed), and
// autocannon for load.
import { Agent, request } from 'node:https';
import { createServer } from 'node:net';
import autocannon from 'autocannon';

/** The API key the bench's server is started with. */
export const KEY = 'bench-key-not-secret';

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Kept alive for every call; destroyed once the server runs are over. */
export const agent = new Agent({ keepAlive: true, rejectUnauthorized: false });

export function call(base: string, method: string, path: string, body?: string, key = KEY): Promise<{ status: number; ms: number; body: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { method, agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export function cannon(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ tlsOptions: { rejectUnauthorized: false }, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}
