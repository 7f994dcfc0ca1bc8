// A real Redis server for tests: Debian's redis-server on a free loopback port, no persistence,
// stopped with the suite. `.ci/run` installs it; a machine without it fails the suite loudly.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { connectRedis, type SharedRedis } from '../../src/ops/redis.ts';
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

/**
 * A redis-server and a connection to it under a key prefix of its own, for the tests of one file:
 * started before them, closed and stopped after. Read the fields inside tests (they are set in beforeAll).
 */
export function redisForSuite(): { server: RedisServer; redis: SharedRedis } {
  const suite = {} as { server: RedisServer; redis: SharedRedis };
  beforeAll(async () => {
    suite.server = await startRedis();
    suite.redis = connectRedis({ url: suite.server.url, prefix: `t${randomUUID().slice(0, 8)}` });
    await suite.redis.whenReady(5000);
  });
  afterAll(async () => {
    await suite.redis.close();
    await suite.server.stop();
  });
  return suite;
}
