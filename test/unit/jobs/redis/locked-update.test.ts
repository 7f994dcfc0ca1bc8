// A webhook delivery's progress is written into its queue entry only by the run that holds the entry's
// lock, against a real redis-server and BullMQ's own locks: a run whose lock lapsed (its replica
// stalled, the entry free for another) or that never held it writes nothing over the entry.
import { randomUUID } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { updateDataWhileLocked } from '../../../../src/jobs/redis/locks.ts';
import { redisForSuite } from '../../../helpers/redis.ts';

const suite = redisForSuite();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Entry {
  progress: number;
}

interface TakenEntry {
  job: Job<Entry>;
  token: string;
  /** The entry's data as Redis holds it now. */
  read(): Promise<Entry | undefined>;
}

/** Runs `body` on an entry taken by a worker in BullMQ's manual mode: locked for `lockMs` under its token, never renewed. */
async function withTakenEntry(lockMs: number, body: (e: TakenEntry) => Promise<void>): Promise<void> {
  const name = `locked-${randomUUID().slice(0, 8)}`;
  const queue = new Queue<Entry>(name, { connection: suite.redis.queue as Redis, prefix: suite.redis.prefix });
  const worker = new Worker<Entry>(name, null, { connection: suite.redis.blocking(), prefix: suite.redis.prefix, lockDuration: lockMs });
  try {
    await queue.add('deliver', { progress: 1 }, { jobId: 'entry' });
    const token = randomUUID();
    const job = (await worker.getNextJob(token)) as Job<Entry> | undefined;
    if (job === undefined) throw new Error('no entry to take');
    await body({ job, token, read: async () => (await queue.getJob('entry'))?.data });
  } finally {
    await worker.close(true);
    await queue.close();
  }
}

describe('a queue entry is written only under its lock', () => {
  it('the run holding the lock writes its progress into the entry', () =>
    withTakenEntry(30_000, async ({ job, token, read }) => {
      expect(await updateDataWhileLocked(suite.redis.queue, job, token, { progress: 2 })).toBe(true);
      expect(await read()).toEqual({ progress: 2 });
    }));

  it('a run whose lock lapsed writes nothing, so it cannot put older progress over a newer run', () =>
    withTakenEntry(200, async ({ job, token, read }) => {
      await sleep(400);
      expect(await updateDataWhileLocked(suite.redis.queue, job, token, { progress: 0 })).toBe(false);
      expect(await read()).toEqual({ progress: 1 });
    }));

  it('a run with another token, or none, writes nothing while the lock is held', () =>
    withTakenEntry(30_000, async ({ job, read }) => {
      expect(await updateDataWhileLocked(suite.redis.queue, job, randomUUID(), { progress: 0 })).toBe(false);
      expect(await updateDataWhileLocked(suite.redis.queue, job, undefined, { progress: 0 })).toBe(false);
      expect(await read()).toEqual({ progress: 1 });
    }));
});
