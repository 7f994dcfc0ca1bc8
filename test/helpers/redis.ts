// A real Redis server for tests: Debian's redis-server on a free loopback port, no persistence,
// stopped with the suite. `.ci/run` installs it; a machine without it fails the suite loudly.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './app.ts';

export interface RedisServer {
  url: string;
  port: number;
  /** A 32-byte AES key file, as REDIS_ENCRYPTION_KEY_FILE reads it. */
  keyFile: string;
  /** Every command the server receives from now on, as its MONITOR prints it. */
  monitor(): Promise<{ lines: string[]; stop(): Promise<void> }>;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'redis-test-'));
  const keyFile = join(dir, 'encryption.key');
  writeFileSync(keyFile, `${Buffer.alloc(32, 42).toString('base64')}\n`);
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch {
      if (Date.now() > deadline) throw new Error('redis-server did not start (is it installed? apt-get install redis-server)');
      probe.disconnect();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  probe.disconnect();
  return {
    url,
    port,
    keyFile,
    async monitor() {
      const client = new Redis(url);
      const lines: string[] = [];
      const m = await client.monitor();
      m.on('monitor', (_time: string, args: string[]) => lines.push(args.join(' ')));
      return {
        lines,
        async stop() {
          m.disconnect();
          client.disconnect();
        },
      };
    },
    async stop() {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
