// Both job stores keep a webhook's end honest against a replica that lost its lock: a delivered
// webhook stays delivered whatever is reported after, its attempt count never goes down, and a give-up
// ends only a webhook still pending (against a real redis-server for the shared store).
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryJobStore } from '../../../src/jobs/memory/store.ts';
import { RedisJobStore } from '../../../src/jobs/redis/store.ts';
import { Sealer } from '../../../src/jobs/redis/sealing.ts';
import type { JobRecord, JobStore } from '../../../src/jobs/store.ts';
import { redisForSuite } from '../../helpers/redis.ts';

const suite = redisForSuite();

const stores: Array<[string, () => JobStore]> = [
  ['MemoryJobStore', () => new MemoryJobStore()],
  ['RedisJobStore', () => new RedisJobStore(suite.redis.command, `${suite.redis.prefix}-${randomUUID().slice(0, 8)}`, { leaseMs: 60_000, sealer: new Sealer(randomBytes(32)) })],
];

/** A committed job with a pending webhook. */
async function jobWithWebhook(store: JobStore): Promise<string> {
  const record: JobRecord = {
    id: randomUUID(),
    keyId: 'key_a',
    status: 'queued',
    createdAt: Date.now(),
    ids: ['a'],
    done: 0,
    webhook: { url: 'https://receiver.example/hook', status: 'pending', attempts: 0 },
  };
  expect(await store.reserve({ jobId: record.id, keyId: record.keyId, chars: 10, items: 1 }, { perKey: 10, maxChars: 1000 })).toBe('ok');
  expect(await store.create(record)).toEqual({ created: true });
  expect(await store.commit(record.id)).toBe(true);
  return record.id;
}

describe.each(stores)('%s: a webhook’s end', (_name, makeStore) => {
  it('a delivered webhook stays delivered: a failure or attempt count reported after it changes nothing', async () => {
    const store = makeStore();
    const id = await jobWithWebhook(store);
    await store.updateWebhook(id, { status: 'delivered', attempts: 2 });
    await store.updateWebhook(id, { status: 'failed', attempts: 5, lastError: 'HTTP 500' });
    expect(await store.failPendingWebhook(id, 'Not sent: given up')).toBe(false);
    expect((await store.get(id))?.webhook).toMatchObject({ status: 'delivered', attempts: 2 });
    expect((await store.get(id))?.webhook?.lastError).toBeUndefined();
  });

  it('the attempt count only goes up: an older count reported late (a replica whose lock lapsed) is not written back', async () => {
    const store = makeStore();
    const id = await jobWithWebhook(store);
    await store.updateWebhook(id, { attempts: 3, firstAttemptAt: 1000 });
    await store.updateWebhook(id, { attempts: 1, firstAttemptAt: 2000 });
    expect((await store.get(id))?.webhook).toMatchObject({ status: 'pending', attempts: 3, firstAttemptAt: 1000 });
    await store.updateWebhook(id, { status: 'failed', attempts: 2, lastError: 'HTTP 500' });
    expect((await store.get(id))?.webhook).toMatchObject({ status: 'failed', attempts: 3, lastError: 'HTTP 500' });
    await store.updateWebhook(id, { attempts: 4 });
    expect((await store.get(id))?.webhook?.attempts).toBe(4);
  });

  it('a give-up ends a pending webhook as failed, with why, once; a job that is gone is left alone', async () => {
    const store = makeStore();
    const id = await jobWithWebhook(store);
    expect(await store.failPendingWebhook(id, 'Not sent: given up after 8 tries')).toBe(true);
    expect((await store.get(id))?.webhook).toMatchObject({ status: 'failed', lastError: 'Not sent: given up after 8 tries' });
    expect(await store.failPendingWebhook(id, 'again')).toBe(false);
    expect((await store.get(id))?.webhook?.lastError).toBe('Not sent: given up after 8 tries');
    expect(await store.failPendingWebhook(randomUUID(), 'gone')).toBe(false);
  });

  it('a give-up records the attempts the queue knows were made, never fewer than the job already shows', async () => {
    const store = makeStore();
    const counted = await jobWithWebhook(store);
    await store.updateWebhook(counted, { attempts: 1 });
    expect(await store.failPendingWebhook(counted, 'given up', 3)).toBe(true);
    expect((await store.get(counted))?.webhook).toMatchObject({ status: 'failed', attempts: 3 });
    const ahead = await jobWithWebhook(store);
    await store.updateWebhook(ahead, { attempts: 4 });
    expect(await store.failPendingWebhook(ahead, 'given up', 2)).toBe(true);
    expect((await store.get(ahead))?.webhook).toMatchObject({ status: 'failed', attempts: 4 });
  });
});
