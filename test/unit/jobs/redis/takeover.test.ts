// How soon a replica's items are taken over after it is killed with kill -9, on a real Redis, against
// JOB_LOCK_MS (README, "Scaling out": between 0.95 and 1.1 times it). Real service processes, the
// time measured from the kill to the moment another replica's worker holds the item's BullMQ lock;
// and an item held (its lock renewed) for longer than JOB_LOCK_MS before the kill.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueScheduler } from '../../../../src/jobs/redis/scheduler.ts';
import type { QueuedItem } from '../../../../src/jobs/scheduler.ts';
import { Sealer } from '../../../../src/jobs/redis/sealing.ts';
import { connectRedis } from '../../../../src/ops/redis.ts';
import { bearer, REPO_ROOT, TEST_KEY } from '../../../helpers/app.ts';
import { startServerProcess, type ServerProcess } from '../../../helpers/process.ts';
import { startRedis, type RedisServer } from '../../../helpers/redis.ts';
import { until } from '../../../helpers/wait.ts';

const LOCK_MS = 3000;
/** What the test itself adds to a measured takeover: polling every 10 ms and a loaded machine's scheduling. */
const SLACK_MS = 300;
/** Kills in a row: one takeover in the old (L, 2L] range could fall under the bound by chance; three in a row hardly. */
const ROUNDS = 3;

let redis: RedisServer;
let client: Redis;
const procs: ServerProcess[] = [];

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
});
afterAll(async () => {
  for (const p of procs) p.child.kill('SIGKILL');
  client.disconnect();
  await redis.stop();
});

/** A BullMQ lock's value is `<worker id>:<n>`: the worker (so the replica) that holds the item. */
const workerOf = (token: string | null): string | undefined => (token === null ? undefined : token.slice(0, token.lastIndexOf(':')));

describe('a replica killed with kill -9 gives its items up after about JOB_LOCK_MS', () => {
  it(`another replica takes each item over between 0.95 and 1.1 times JOB_LOCK_MS (${LOCK_MS} ms) after the kill, ${ROUNDS} times in a row`, async () => {
    const prefix = `t${Math.random().toString(36).slice(2, 10)}`;
    const env = {
      REDIS_URL: redis.url,
      REDIS_ENCRYPTION_KEY_FILE: redis.keyFile,
      REDIS_KEY_PREFIX: prefix,
      JOB_LOCK_MS: String(LOCK_MS),
      API_KEYS: TEST_KEY,
      RATE_LIMIT_MAX: '10000',
      MODEL_DIR: 'test/fixtures/contract-model',
      LOG_LEVEL: 'info',
    };
    // Long conversations: an item runs for some 100 ms on this model.
    const long = Array.from({ length: 9000 }, (_, i) => ({ user: i % 2 === 0 ? 'user1' : 'user2', text: `message ${i} about homework and music` }));
    let holder = await startServerProcess(env);
    procs.push(holder);
    const measured: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // The replica that takes over runs, but is frozen while the holder takes the job's two items (a
      // replica scores two at once), so both are the holder's.
      const standby = await startServerProcess(env);
      procs.push(standby);
      standby.child.kill('SIGSTOP');
      const res = await fetch(`${holder.url}/v2/predict/batch`, {
        method: 'POST',
        headers: { ...bearer(), 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'batch', conversations: [0, 1].map((i) => ({ id: `c${i}`, messages: long })) }),
      });
      expect(res.status).toBe(202);
      const { job_id: jobId, poll_url: pollUrl } = (await res.json()) as { job_id: string; poll_url: string };
      const locks = [0, 1].map((i) => `${prefix}:items:${jobId}.${i}:lock`);
      const holders = async () => (await client.mget(...locks)).map(workerOf);
      // The moment both run on the holder, it is killed, mid-item.
      const held = await until(async () => {
        const w = await holders();
        return w[0] !== undefined && w.every((x) => x === w[0]) ? w[0] : undefined;
      }, 30_000, 0);
      standby.child.kill('SIGCONT');
      const killedAt = performance.now();
      holder.child.kill('SIGKILL');
      const takenAt: Array<number | undefined> = [undefined, undefined];
      await until(async () => {
        const w = await holders();
        const now = performance.now() - killedAt;
        w.forEach((x, i) => {
          if (x !== undefined && x !== held) takenAt[i] ??= now;
        });
        return takenAt.every((t) => t !== undefined) ? true : undefined;
      }, 4 * LOCK_MS, 5);
      await holder.exited;
      measured.push(...(takenAt as number[]));
      // And the job ends with both results, on the replica that took it over.
      const job = await until(async () => {
        const j = (await (await fetch(`${standby.url}${pollUrl}`, { headers: bearer() })).json()) as { status: string; progress: unknown };
        return j.status === 'done' || j.status === 'failed' ? j : undefined;
      }, 30_000, 50);
      expect(job).toMatchObject({ status: 'done', progress: { done: 2, total: 2 } });
      holder = standby;
    }
    console.log(`takeover after kill -9, JOB_LOCK_MS=${LOCK_MS}: ${measured.map((t) => `${Math.round(t)} ms`).join(', ')}`);
    for (const t of measured) {
      expect(t).toBeGreaterThanOrEqual(0.95 * LOCK_MS - SLACK_MS);
      expect(t).toBeLessThanOrEqual(1.1 * LOCK_MS + SLACK_MS);
    }
  }, 240_000);

  it('an item whose lock was renewed for longer than JOB_LOCK_MS is taken over between 0.95 and 1.1 times JOB_LOCK_MS after kill -9', async () => {
    const lockMs = 2000;
    const prefix = `t${Math.random().toString(36).slice(2, 10)}`;
    const shared = connectRedis({ url: redis.url, prefix });
    await shared.whenReady(5000);
    // The key hold-items.ts seals with.
    const taker = new QueueScheduler({ redis: shared, sealer: new Sealer(Buffer.alloc(32, 1)), concurrency: 4, lockMs, registry: new Registry() });
    const child = spawn(process.execPath, ['test/unit/jobs/redis/hold-items.ts', redis.url, prefix, String(lockMs)], { cwd: REPO_ROOT });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await until(async () => (out.includes('ready') ? true : undefined), 30_000);
      const items: QueuedItem[] = [0, 1, 2].map((index) => ({ jobId: 'held', keyId: 'key_a', index, id: `c${index}`, request: { conversation: 'user1: hi' }, chars: 9, total: 3 }));
      // Queued before the taker's worker starts, so the child takes all three.
      await taker.enqueue(items);
      await until(async () => (out.match(/took held\.\d/g)?.length === 3 ? true : undefined), 10_000);
      const takenAt = new Map<number, number>();
      let killedAt = Number.POSITIVE_INFINITY;
      taker.start(
        async (item) => {
          takenAt.set(item.index, performance.now() - killedAt);
        },
        async () => {},
      );
      // Long enough for several renewals: the lock then lapses JOB_LOCK_MS after the last one.
      await new Promise((r) => setTimeout(r, 1.6 * lockMs));
      killedAt = performance.now();
      child.kill('SIGKILL');
      await until(async () => (takenAt.size === 3 ? true : undefined), 4 * lockMs);
      const times = [...takenAt.values()];
      console.log(`takeover of items held ${1.6 * lockMs} ms, after kill -9, JOB_LOCK_MS=${lockMs}: ${times.map((t) => `${Math.round(t)} ms`).join(', ')}`);
      for (const t of times) {
        expect(t).toBeGreaterThanOrEqual(0.95 * lockMs - SLACK_MS);
        expect(t).toBeLessThanOrEqual(1.1 * lockMs + SLACK_MS);
      }
    } finally {
      child.kill('SIGKILL');
      await exited;
      await taker.drain(AbortSignal.timeout(2000));
      await shared.close();
    }
  }, 60_000);
});
