// The Redis parts on their own, against a real redis-server: the store counts an item once however
// often a queue reports it, gives back a submission that never reached its commit, and the BullMQ scheduler gives a job's item up to the job (which then
// fails) when every attempt at it was cut off, instead of leaving the job running forever. The
// webhook URL is sealed in the job record, and one the previous version stored in the clear is still
// delivered, after the SSRF guard has checked it again. A webhook whose job cannot be read when it is
// picked up is tried again, not dropped, and so is an item given up while the store cannot record it. A webhook waiting out its backoff holds no delivery slot. A webhook the queue gives up after all its attempts ends as failed, with why, a last try cut off by shutdown included.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { QueueScheduler } from '../../../../src/jobs/redis/scheduler.ts';
import { RedisJobStore } from '../../../../src/jobs/redis/store.ts';
import type { QueuedItem } from '../../../../src/jobs/scheduler.ts';
import { Sealer } from '../../../../src/jobs/redis/sealing.ts';
import { createSharedJobs } from '../../../../src/jobs/redis/jobs.ts';
import { QueueNotifier, type QueueNotifierOptions } from '../../../../src/jobs/redis/notifier.ts';
import type { DeliveryProgress } from '../../../../src/jobs/notifier.ts';
import { webhookMessageId } from '../../../../src/webhooks/signing.ts';
import { JobService } from '../../../../src/jobs/jobs.ts';
import { jobScoring } from '../job-scoring.ts';
import type { JobRecord, Lease } from '../../../../src/jobs/store.ts';
import { JobsUnavailableError, type JobView } from '../../../../src/jobs/types.ts';
import { connectRedis, type SharedRedis } from '../../../../src/ops/redis.ts';
import type { Prediction } from '../../../../src/scoring/types.ts';
import { testConfig } from '../../../helpers/app.ts';
import { redisForSuite } from '../../../helpers/redis.ts';
import { until } from '../../../helpers/wait.ts';
import { startReceiver, verifyStandardWebhook, type Receiver } from '../../../helpers/webhook-receiver.ts';

const suite = redisForSuite();

const record = (ids: string[], idem?: string): JobRecord => ({
  id: randomUUID(),
  keyId: 'key_a',
  status: 'queued',
  createdAt: Date.now(),
  ids,
  done: 0,
  ...(idem === undefined ? {} : { idempotency: { key: idem, fingerprint: 'f' } }),
});
const limits = { perKey: 10, maxChars: 1_000_000 };
const leaseOf = (r: JobRecord, chars: number): Lease => ({
  jobId: r.id,
  keyId: r.keyId,
  chars,
  items: r.ids.length,
  ...(r.idempotency === undefined ? {} : { idempotencyKey: r.idempotency.key }),
});
const sealer = new Sealer(randomBytes(32));
/** A store with a key prefix of its own, so its counters start at zero. */
const freshStore = (leaseMs = 60_000, prefix = `${suite.redis.prefix}-${randomUUID().slice(0, 8)}`) => new RedisJobStore(suite.redis.command, prefix, { leaseMs, sealer });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const score = { harmfulness_score: 0.1, is_harmful: false, risk_level: 'Safe' as const, predatory_user: 'neither' as const, user_probabilities: { user1: 0.05, user2: 0.05, neither: 0.9 }, confidence: 0.8, num_segments: 1, used_age_features: false };

describe('RedisJobStore counts each item once', () => {
  it('a result and an item reported twice (a queue may run an item twice) count once, and free their budget once', async () => {
    const store = freshStore();
    const r = record(['a', 'b']);
    expect(await store.reserve(leaseOf(r, 30), limits)).toBe('ok');
    expect(await store.create(r)).toEqual({ created: true });
    expect(await store.commit(r.id)).toBe(true);
    await store.markStarted(r.id, Date.now());
    await store.addResult(r.id, 'a', score);
    await store.addResult(r.id, 'a', score);
    expect((await store.get(r.id))!.done).toBe(1);
    expect(await store.itemFinished(r.id, 10, 0)).toBe(1);
    expect(await store.itemFinished(r.id, 10, 0)).toBe(1);
    expect(await store.counts()).toMatchObject({ pendingItems: 1 });
    expect(await store.itemFinished(r.id, 20, 1)).toBe(2);
    expect(await store.counts()).toEqual({ unfinishedJobs: 1, pendingItems: 0 });
    expect(await store.complete(r.id, Date.now(), 60_000)).toMatchObject({ status: 'done' });
    expect(await store.complete(r.id, Date.now(), 60_000)).toBeUndefined();
    expect(await store.counts()).toEqual({ unfinishedJobs: 0, pendingItems: 0 });
  });

  it('two submissions claiming one Idempotency-Key at once create one job', async () => {
    const store = freshStore();
    const [a, b] = [record(['x'], 'same-key'), record(['x'], 'same-key')];
    for (const r of [a, b]) expect(await store.reserve(leaseOf(r, 1), limits)).toBe('ok');
    const results = await Promise.all([store.create(a), store.create(b)]);
    const created = results.filter((x) => x.created);
    expect(created).toHaveLength(1);
    const winner = results[0]!.created ? a.id : b.id;
    expect(results.find((x) => !x.created)).toEqual({ created: false, existingJobId: winner });
    expect(await store.findIdempotent('key_a', 'same-key')).toBe(winner);
  });
});

describe('RedisJobStore gives back a submission that never reaches its commit', () => {
  const one = { perKey: 1, maxChars: 1_000_000 };

  it('a lease that lapses (its replica died mid-submission) is given back before the next reservation: budget, job and Idempotency-Key claim', async () => {
    const store = freshStore(300);
    const dead = record(['a', 'b'], 'k-1');
    expect(await store.reserve(leaseOf(dead, 40), one)).toBe('ok');
    expect(await store.create(dead)).toEqual({ created: true });
    // Its replica stops here, before queueing the items or committing.
    const next = record(['c']);
    expect(await store.reserve(leaseOf(next, 5), one)).toBe('per_key_limit');
    await sleep(400);
    expect(await store.reserve(leaseOf(next, 5), one)).toBe('ok');
    expect(await store.counts()).toEqual({ unfinishedJobs: 1, pendingItems: 1 });
    expect(await store.get(dead.id)).toBeUndefined();
    expect(await store.findIdempotent('key_a', 'k-1')).toBeUndefined();
    // The replica was only slow: it learns the job is gone and stores nothing more.
    expect(await store.commit(dead.id)).toBe(false);
    await expect(store.create(dead)).rejects.toBeInstanceOf(JobsUnavailableError);
    expect(await store.get(dead.id)).toBeUndefined();
  });

  it('the gauges read a lapsed lease as given back without waiting for another submission', async () => {
    const store = freshStore(200);
    const r = record(['a', 'b', 'c']);
    expect(await store.reserve(leaseOf(r, 30), limits)).toBe('ok');
    expect(await store.counts()).toEqual({ unfinishedJobs: 1, pendingItems: 3 });
    await sleep(300);
    expect(await store.counts()).toEqual({ unfinishedJobs: 0, pendingItems: 0 });
  });

  it('abandon gives back exactly what was reserved, once, and an item of the abandoned job queued anyway frees nothing', async () => {
    const store = freshStore();
    const kept = record(['k']);
    expect(await store.reserve(leaseOf(kept, 7), limits)).toBe('ok');
    expect(await store.create(kept)).toEqual({ created: true });
    expect(await store.commit(kept.id)).toBe(true);
    const r = record(['a', 'b'], 'k-2');
    expect(await store.reserve(leaseOf(r, 50), limits)).toBe('ok');
    expect(await store.create(r)).toEqual({ created: true });
    await store.abandon(r.id);
    await store.abandon(r.id);
    expect(await store.counts()).toEqual({ unfinishedJobs: 1, pendingItems: 1 });
    expect(await store.get(r.id)).toBeUndefined();
    expect(await store.findIdempotent('key_a', 'k-2')).toBeUndefined();
    // Its items reached the queue before the failure was seen: they run, find no job, count nothing.
    expect(await store.itemFinished(r.id, 25, 0)).toBe(0);
    expect(await store.itemFinished(r.id, 25, 1)).toBe(0);
    expect(await store.counts()).toEqual({ unfinishedJobs: 1, pendingItems: 1 });
    // Only the committed job's own items free its budget, and abandon cannot touch it.
    await store.abandon(kept.id);
    expect(await store.get(kept.id)).toMatchObject({ status: 'queued' });
    expect(await store.itemFinished(kept.id, 7, 0)).toBe(1);
    expect(await store.complete(kept.id, Date.now(), 60_000)).toMatchObject({ status: 'done' });
    expect(await store.counts()).toEqual({ unfinishedJobs: 0, pendingItems: 0 });
    // The abandoned claim is free: the same Idempotency-Key makes a new job.
    const retry = record(['a', 'b'], 'k-2');
    expect(await store.reserve(leaseOf(retry, 50), limits)).toBe('ok');
    expect(await store.create(retry)).toEqual({ created: true });
  });

  it('a job whose items already run when its lease lapses is kept and runs on: its items free its budget once', async () => {
    const store = freshStore(200);
    const r = record(['a', 'b'], 'k-3');
    expect(await store.reserve(leaseOf(r, 30), limits)).toBe('ok');
    expect(await store.create(r)).toEqual({ created: true });
    // A worker took the first item before the submitting replica died (no commit).
    await store.markStarted(r.id, Date.now());
    await store.addResult(r.id, 'a', score);
    expect(await store.itemFinished(r.id, 10, 0)).toBe(1);
    await sleep(300);
    expect(await store.counts()).toEqual({ unfinishedJobs: 1, pendingItems: 1 });
    await store.abandon(r.id);
    expect(await store.get(r.id)).toMatchObject({ status: 'running', done: 1 });
    expect(await store.findIdempotent('key_a', 'k-3')).toBe(r.id);
    expect(await store.itemFinished(r.id, 20, 1)).toBe(2);
    expect(await store.complete(r.id, Date.now(), 60_000)).toMatchObject({ status: 'done' });
    expect(await store.counts()).toEqual({ unfinishedJobs: 0, pendingItems: 0 });
  });

  it('a committed job keeps its budget past the lease time, until it completes', async () => {
    const store = freshStore(100);
    const r = record(['a']);
    expect(await store.reserve(leaseOf(r, 9), one)).toBe('ok');
    expect(await store.create(r)).toEqual({ created: true });
    expect(await store.commit(r.id)).toBe(true);
    await sleep(200);
    expect(await store.reserve(leaseOf(record(['b']), 9), one)).toBe('per_key_limit');
    expect(await store.get(r.id)).toMatchObject({ status: 'queued' });
    expect(await store.counts()).toEqual({ unfinishedJobs: 1, pendingItems: 1 });
  });
});

describe('RedisJobStore keeps what a replica taking a webhook over needs', () => {
  it('the attempts made and when the first began, beside the status and last error', async () => {
    const store = freshStore();
    const r: JobRecord = { ...record(['a']), webhook: { url: 'https://hooks.example/x', status: 'pending', attempts: 0 } };
    expect(await store.reserve(leaseOf(r, 9), limits)).toBe('ok');
    expect(await store.create(r)).toEqual({ created: true });
    expect((await store.get(r.id))?.webhook).toEqual({ url: 'https://hooks.example/x', status: 'pending', attempts: 0 });
    await store.updateWebhook(r.id, { attempts: 2, firstAttemptAt: 1_790_000_000_123 });
    await store.updateWebhook(r.id, { status: 'failed', lastError: 'HTTP 500' });
    expect((await store.get(r.id))?.webhook).toEqual({ url: 'https://hooks.example/x', status: 'failed', attempts: 2, firstAttemptAt: 1_790_000_000_123, lastError: 'HTTP 500' });
    // A second replica delivering at the same time cannot move the first attempt's time later.
    await store.updateWebhook(r.id, { attempts: 3, firstAttemptAt: 1_790_000_999_000 });
    expect((await store.get(r.id))?.webhook).toMatchObject({ attempts: 3, firstAttemptAt: 1_790_000_000_123 });
    // A job that is gone is not written back into being.
    await store.updateWebhook('no-such-job', { attempts: 1, firstAttemptAt: 1 });
    expect(await store.get('no-such-job')).toBeUndefined();
  });
});

describe('QueueScheduler hands an item it gave up on back to its job', () => {
  it('after every attempt at an item was cut off, the lost-item handler is told once', async () => {
    const scheduler = new QueueScheduler({ redis: suite.redis, sealer: new Sealer(randomBytes(32)), concurrency: 1, lockMs: 1000, registry: new Registry() });
    const lost: Array<{ item: QueuedItem; detail: string }> = [];
    let attempts = 0;
    scheduler.start(
      async () => {
        attempts++;
        // What an item cut off by its replica's shutdown does: the queue keeps it for another try.
        throw new Error('interrupted by shutdown; left for another replica');
      },
      async (item, detail) => {
        lost.push({ item, detail });
      },
    );
    const item: QueuedItem = { jobId: randomUUID(), keyId: 'key_a', index: 0, id: 'conv-0', request: { conversation: 'user1: hi' }, chars: 9, total: 1 };
    await scheduler.enqueue([item]);
    await until(async () => (lost.length > 0 ? true : undefined), 20_000);
    // Two more lock periods: a second report of the same item would have arrived by now.
    await new Promise((r) => setTimeout(r, 2000));
    expect(attempts).toBe(5);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.item).toMatchObject({ jobId: item.jobId, index: 0, id: 'conv-0', chars: 9 });
    expect(lost[0]!.detail).toMatch(/could not be scored/);
    await scheduler.drain(AbortSignal.timeout(2000));
  });

  it('tells the lost-item handler again while the store cannot be reached, until it is told', async () => {
    const scheduler = new QueueScheduler({ redis: suite.redis, sealer: new Sealer(randomBytes(32)), concurrency: 1, lockMs: 1000, registry: new Registry() });
    let tries = 0;
    let told = false;
    scheduler.start(
      async () => {
        throw new Error('interrupted by shutdown; left for another replica');
      },
      async () => {
        // The store is failing over when the item is given up: the first report cannot be recorded.
        if (++tries === 1) throw new JobsUnavailableError('the job store (Redis) cannot be reached');
        told = true;
      },
    );
    const item: QueuedItem = { jobId: randomUUID(), keyId: 'key_a', index: 0, id: 'conv-0', request: { conversation: 'user1: hi' }, chars: 9, total: 1 };
    await scheduler.enqueue([item]);
    await until(async () => (told ? true : undefined), 20_000);
    expect(tries).toBe(2);
    await scheduler.drain(AbortSignal.timeout(2000));
  });
});

describe('the webhook URL is sealed in the job record', () => {
  const url = 'https://hooks.example/cb?token=MARKER-url-5e2c';

  it('is stored sealed and read back; one stored in the clear (by the previous version) reads as it is; one sealed under another key or for another job reads as ""', async () => {
    const prefix = `${suite.redis.prefix}-${randomUUID().slice(0, 8)}`;
    const store = freshStore(60_000, prefix);
    const r: JobRecord = { ...record(['a']), webhook: { url, status: 'pending', attempts: 0 } };
    expect(await store.reserve(leaseOf(r, 9), limits)).toBe('ok');
    expect(await store.create(r)).toEqual({ created: true });
    const key = `${prefix}:job:${r.id}`;
    const stored = (await suite.redis.command.hget(key, 'webhookUrl'))!;
    expect(stored).not.toContain('MARKER');
    expect(stored).not.toContain('hooks.example');
    expect(Buffer.from(stored, 'base64').toString('latin1')).not.toContain('MARKER');
    expect((await store.get(r.id))?.webhook).toEqual({ url, status: 'pending', attempts: 0 });
    // A rolling upgrade: the previous version's replicas wrote the URL as it came.
    await suite.redis.command.hset(key, 'webhookUrl', url);
    expect((await store.get(r.id))?.webhook?.url).toBe(url);
    await suite.redis.command.hset(key, 'webhookUrl', 'http://hooks.example:8080/cb');
    expect((await store.get(r.id))?.webhook?.url).toBe('http://hooks.example:8080/cb');
    // Sealed under another REDIS_ENCRYPTION_KEY_FILE, moved from another job, or altered: unreadable,
    // while the rest of the record still reads.
    for (const other of [new Sealer(randomBytes(32)).sealText(url, `${r.id}:webhook_url`), sealer.sealText(url, `${randomUUID()}:webhook_url`), `${stored.slice(0, -4)}AAA=`]) {
      await suite.redis.command.hset(key, 'webhookUrl', other);
      expect((await store.get(r.id))?.webhook).toEqual({ url: '', status: 'pending', attempts: 0 });
    }
  });

  it('a webhook URL the previous version stored in the clear is delivered to when WEBHOOK_ALLOWED_HOSTS still lists it, and not sent when it does not', async () => {
    const receiver = await startReceiver();
    const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    const shared = connectRedis({ url: suite.server.url, prefix: `t${randomUUID().slice(0, 8)}` });
    await shared.whenReady(5000);
    // Items wait at the scorer until the records have been rewritten as the previous version wrote them.
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const prediction: Prediction = { conversation_preview: '', harmful_score: 0.1, is_harmful: false, risk_level: 'Safe', predatory_user: 'neither', user_probabilities: { user1: 0.05, user2: 0.05, neither: 0.9 }, confidence: 0.8, num_segments: 1, used_age_features: false };
    const jobs = createSharedJobs(
      {
        config: testConfig({ WEBHOOK_SECRET: secret, WEBHOOK_ALLOWED_HOSTS: receiver.hostPort, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_RETRY_BASE_MS: '20' }),
        ...jobScoring({ ready: true, manifest: undefined, score: async () => (await gate, [prediction]) }),
        registry: new Registry(),
        logger: { info: () => {}, warn: () => {} },
      },
      { redis: shared, sealer, lockMs: 5000 },
    );
    try {
      const submit = async (webhookUrl: string) => {
        const r = await jobs.submit({ keyId: 'key_a', items: [{ id: 'c0', request: { conversation: 'user1: hi' } }], webhookUrl });
        if (!r.ok) throw new Error(r.error.code);
        return r.job.job_id;
      };
      const allowed = await submit(receiver.url('/sealed-now'));
      const moved = await submit(receiver.url('/sealed-too'));
      await suite.redis.command.hset(`${shared.prefix}:job:${allowed}`, 'webhookUrl', receiver.url('/legacy?token=MARKER-legacy'));
      await suite.redis.command.hset(`${shared.prefix}:job:${moved}`, 'webhookUrl', 'https://evil.example/steal?token=MARKER-legacy');
      release();
      const settled = async (id: string) =>
        until(async () => {
          const j = await jobs.get('key_a', id);
          return j?.webhook?.status === 'delivered' || j?.webhook?.status === 'failed' ? j : undefined;
        }, 20_000);
      const a = await settled(allowed);
      const b = await settled(moved);
      expect(a.webhook).toEqual({ status: 'delivered', attempts: 1 });
      expect(receiver.requests.map((q) => q.path)).toEqual(['/legacy?token=MARKER-legacy']);
      expect(verifyStandardWebhook(secret, receiver.requests[0]!)).toBe(true);
      expect(JSON.parse(receiver.requests[0]!.body).data.job_id).toBe(allowed);
      expect(b.webhook).toEqual({ status: 'failed', attempts: 0, last_error: 'Not sent: webhook_url host evil.example:443 is not in WEBHOOK_ALLOWED_HOSTS' });
    } finally {
      release();
      await jobs.drain(2000);
      await shared.close();
      await receiver.close();
    }
  });
});

/**
 * Marks the test's own reads of a job (its polls for the webhook's status), which the store's injected
 * failures leave alone: a failing read is meant for the service's webhook path, and a poll that met it
 * first (the machine busy) both failed the test and took the failure from the path under test.
 */
const testsOwnRead = new AsyncLocalStorage<true>();

/**
 * A store whose next `readsToFail` reads fail, as a Redis failing over, once a job has ended; and
 * whose first `progressWritesToFail` webhook writes that record attempts only (no status) fail.
 */
class ReadsFailAfterCompletion extends RedisJobStore {
  readonly sealer: Sealer;
  readsToFail: number;
  progressWritesToFail = 0;
  armed = false;
  failedReads = 0;
  constructor(shared: SharedRedis, sealer: Sealer, readsToFail: number) {
    super(shared.command, shared.prefix, { leaseMs: 60_000, sealer });
    this.sealer = sealer;
    this.readsToFail = readsToFail;
  }
  override async complete(id: string, at: number, ttlMs: number): Promise<JobRecord | undefined> {
    const ended = await super.complete(id, at, ttlMs);
    this.armed = true;
    return ended;
  }
  override async get(id: string): Promise<JobRecord | undefined> {
    if (this.armed && this.failedReads < this.readsToFail && testsOwnRead.getStore() === undefined) {
      this.failedReads++;
      throw new JobsUnavailableError('the job store (Redis) cannot be reached');
    }
    return super.get(id);
  }
  override async updateWebhook(jobId: string, patch: Partial<NonNullable<JobRecord['webhook']>>): Promise<void> {
    if (patch.status === undefined && this.progressWritesToFail > 0) {
      this.progressWritesToFail--;
      throw new JobsUnavailableError('the job store (Redis) cannot be reached');
    }
    return super.updateWebhook(jobId, patch);
  }
}

interface WebhookRig {
  receiver: Receiver;
  secret: string;
  store: ReadsFailAfterCompletion;
  /** The replica's Redis connections (the webhook queue's among them). */
  redis: SharedRedis;
  jobs: JobService;
  registry: Registry;
  /** The messages the JobService logged as warnings. */
  warnings: string[];
  /** Submits one chat whose webhook goes to `path` on the receiver; its job id. */
  submit(path: string): Promise<string>;
  webhookOf(jobId: string): Promise<JobView['webhook']>;
  /** The job's webhook once it reads `status`, waiting up to `timeoutMs`. */
  webhookWhen(jobId: string, status: string, timeoutMs: number): Promise<JobView['webhook']>;
}

/**
 * Runs `body` with a real receiver and a JobService on a Redis prefix of its own that scores every
 * chat Safe, its webhooks signed and sent to the receiver through a QueueNotifier with `notifier`'s
 * options; once a job has ended, the store's next `readsToFail` reads fail. Closes all afterwards.
 */
async function withWebhookRig(readsToFail: number, notifier: QueueNotifierOptions, body: (rig: WebhookRig) => Promise<void>, env: Record<string, string> = {}): Promise<void> {
  const receiver = await startReceiver();
  const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
  const shared = connectRedis({ url: suite.server.url, prefix: `t${randomUUID().slice(0, 8)}` });
  await shared.whenReady(5000);
  const store = new ReadsFailAfterCompletion(shared, new Sealer(randomBytes(32)), readsToFail);
  const registry = new Registry();
  const warnings: string[] = [];
  const prediction: Prediction = { conversation_preview: '', harmful_score: 0.1, is_harmful: false, risk_level: 'Safe', predatory_user: 'neither', user_probabilities: { user1: 0.05, user2: 0.05, neither: 0.9 }, confidence: 0.8, num_segments: 1, used_age_features: false };
  const jobs = new JobService(
    {
      config: testConfig({ WEBHOOK_SECRET: secret, WEBHOOK_ALLOWED_HOSTS: receiver.hostPort, WEBHOOK_ALLOW_HTTP: 'true', ...env }),
      ...jobScoring({ ready: true, manifest: undefined, score: async () => [prediction] }),
      registry,
      logger: { info: () => {}, warn: (_o: object, msg: string) => warnings.push(msg) },
    },
    { store, scheduler: new QueueScheduler({ redis: shared, sealer: store.sealer, concurrency: 2, lockMs: 5000, registry }), notifier: new QueueNotifier(shared, 5000, notifier) },
  );
  const submit = async (path: string): Promise<string> => {
    const r = await jobs.submit({ keyId: 'key_a', items: [{ id: 'c0', request: { conversation: 'user1: hi' } }], webhookUrl: receiver.url(path) });
    if (!r.ok) throw new Error(r.error.code);
    return r.job.job_id;
  };
  const webhookOf = async (jobId: string) => (await testsOwnRead.run(true, () => jobs.get('key_a', jobId)))?.webhook;
  const webhookWhen = (jobId: string, status: string, timeoutMs: number) =>
    until(async () => {
      const webhook = await webhookOf(jobId);
      return webhook?.status === status ? webhook : undefined;
    }, timeoutMs);
  try {
    await body({ receiver, secret, store, redis: shared, jobs, registry, warnings, submit, webhookOf, webhookWhen });
  } finally {
    await jobs.drain(1000);
    await receiver.close();
    await shared.close();
  }
}

describe('a webhook whose job cannot be read when a replica picks it up', () => {
  it('is tried again after the queue’s backoff and delivered once, not dropped as if the job were gone', async () => {
    // The first read after the job ended (the webhook worker's) meets Redis failing over.
    await withWebhookRig(1, {}, async ({ receiver, secret, store, submit, webhookOf, webhookWhen }) => {
      const id = await submit('/failover');
      await webhookWhen(id, 'delivered', 20_000);
      expect(store.failedReads).toBe(1);
      expect(await webhookOf(id)).toEqual({ status: 'delivered', attempts: 1 });
      expect(receiver.requests).toHaveLength(1);
      expect(verifyStandardWebhook(secret, receiver.requests[0]!)).toBe(true);
      expect(JSON.parse(receiver.requests[0]!.body)).toMatchObject({ type: 'batch.completed', data: { job_id: id } });
    });
  });
});

describe('a webhook waiting out its backoff holds no delivery slot', () => {
  it('with one slot, another job’s webhook is delivered during the wait; the first resumes from its recorded attempt, same webhook-id', async () => {
    await withWebhookRig(0, { concurrency: 1 }, async ({ receiver, secret, submit, webhookOf, webhookWhen }) => {
      // The first receiver call is refused for 3 s; every later one is accepted.
      receiver.script({ status: 503, headers: { 'retry-after': '3' } });
      const first = await submit('/down');
      // Recorded before the retry waits, so any replica resumes it from the second attempt.
      await until(async () => ((await webhookOf(first))?.attempts === 1 ? true : undefined), 10_000);
      expect(await webhookOf(first)).toEqual({ status: 'pending', attempts: 1 });
      const second = await submit('/up');
      await webhookWhen(second, 'delivered', 10_000);
      // Had the first held the only slot through its 3 s wait, its retry would have come first.
      expect(receiver.requests.map((r) => r.path)).toEqual(['/down', '/up']);
      expect(await webhookWhen(first, 'delivered', 15_000)).toEqual({ status: 'delivered', attempts: 2 });
      const down = receiver.requests.filter((r) => r.path === '/down');
      expect(down).toHaveLength(2);
      expect(down[1]!.at - down[0]!.at).toBeGreaterThanOrEqual(2900);
      expect(down[1]!.headers['webhook-id']).toBe(down[0]!.headers['webhook-id']);
      expect(receiver.requests.every((r) => verifyStandardWebhook(secret, r))).toBe(true);
    });
  });

  it('a deferral the job store cannot record still waits its Retry-After and counts its attempt: the queue entry carries it', async () => {
    await withWebhookRig(0, {}, async ({ receiver, store, submit, webhookWhen }) => {
      // The attempt's own write and the deferral's both fail.
      store.progressWritesToFail = 2;
      receiver.script({ status: 503, headers: { 'retry-after': '3' } });
      const id = await submit('/down');
      expect(await webhookWhen(id, 'delivered', 15_000)).toEqual({ status: 'delivered', attempts: 2 });
      expect(receiver.requests[1]!.at - receiver.requests[0]!.at).toBeGreaterThanOrEqual(2900);
    });
  });

  it('a deferral whose progress the queue entry cannot save still waits its Retry-After', async () => {
    await withWebhookRig(0, {}, async ({ receiver, redis, submit, webhookOf, webhookWhen }) => {
      // The entry's progress is written by a script on the queue's connection (locks.ts updateDataWhileLocked), its only eval.
      const save = vi.spyOn(redis.queue, 'eval').mockRejectedValueOnce(new Error('Connection is closed.'));
      try {
        receiver.script({ status: 503, headers: { 'retry-after': '3' } });
        const id = await submit('/down');
        await webhookWhen(id, 'delivered', 15_000);
        expect(save).toHaveBeenCalled();
        expect(await webhookOf(id)).toEqual({ status: 'delivered', attempts: 2 });
        expect(receiver.requests[1]!.at - receiver.requests[0]!.at).toBeGreaterThanOrEqual(2900);
      } finally {
        save.mockRestore();
      }
    });
  });

  it('never makes more than WEBHOOK_MAX_ATTEMPTS attempts across deferrals, and its failure names the receiver’s last answer', async () => {
    await withWebhookRig(
      0,
      {},
      async ({ receiver, store, submit, webhookWhen }) => {
        store.progressWritesToFail = Infinity;
        receiver.script(...Array.from({ length: 5 }, () => ({ status: 503, headers: { 'retry-after': '1' } })));
        const id = await submit('/down');
        expect(await webhookWhen(id, 'failed', 15_000)).toEqual({ status: 'failed', attempts: 2, last_error: 'HTTP 503' });
        await sleep(1500);
        expect(receiver.requests).toHaveLength(2);
      },
      { WEBHOOK_MAX_ATTEMPTS: '2' },
    );
  });

  it('a retry scheduled within WEBHOOK_MAX_RETRY_MS is made even when a busy slot starts it past the budget', async () => {
    await withWebhookRig(
      0,
      { concurrency: 1 },
      async ({ receiver, submit, webhookWhen }) => {
        // The first is told to come back in 2 s of a 2.5 s budget; the second holds the only slot for 3 s.
        receiver.script({ status: 503, headers: { 'retry-after': '2' } }, { status: 200, delayMs: 3000 });
        const first = await submit('/down');
        await receiver.waitFor(1);
        await submit('/slow');
        expect(await webhookWhen(first, 'delivered', 15_000)).toEqual({ status: 'delivered', attempts: 2 });
        expect(receiver.requests.map((r) => r.path)).toEqual(['/down', '/slow', '/down']);
      },
      { WEBHOOK_MAX_RETRY_MS: '2500', WEBHOOK_RETRY_BASE_MS: '100' },
    );
  });

  it('a retry that would come after the job’s results expire ends the delivery at once, recorded as failed while the job can still be read', async () => {
    await withWebhookRig(
      0,
      {},
      async ({ receiver, registry, submit, webhookWhen }) => {
        receiver.script({ status: 503, headers: { 'retry-after': '5' } });
        const id = await submit('/down');
        const failed = await webhookWhen(id, 'failed', 2500);
        expect(failed).toEqual({ status: 'failed', attempts: 1, last_error: "HTTP 503; the job's results expire (JOB_RESULT_TTL_MS) before the next retry" });
        const outcomes = (await registry.getSingleMetric('conversation_risk_webhook_deliveries_total')?.get())?.values;
        expect(outcomes?.find((v) => v.labels.outcome === 'failed')?.value).toBe(1);
        expect(receiver.requests).toHaveLength(1);
      },
      { JOB_RESULT_TTL_MS: '3000' },
    );
  });
});

describe('a deferred retry that a queue runs before it is due', () => {
  it('waits again until its time (the move to the delayed set failed after its progress was saved), then runs once', async () => {
    const shared = connectRedis({ url: suite.server.url, prefix: `t${randomUUID().slice(0, 8)}` });
    await shared.whenReady(5000);
    const notifier = new QueueNotifier(shared, 5000);
    const queue = new Queue('webhooks', { connection: shared.queue as Redis, prefix: shared.prefix });
    const calls: Array<{ at: number; resume: DeliveryProgress | undefined }> = [];
    try {
      // The entry as a run that saved its progress, and then failed to move it, leaves it: waiting now.
      const jobId = randomUUID();
      const due = Date.now() + 3000;
      await queue.add('deliver', { job: jobId, message: webhookMessageId(jobId), resume: { attempts: 1, startedAt: Date.now(), lastError: 'HTTP 503', retryAt: due } }, { jobId: `webhook-${jobId}`, removeOnComplete: true });
      notifier.start(
        async (_job, _message, _signal, resume) => void calls.push({ at: Date.now(), resume }),
        async () => {},
      );
      await until(async () => (calls.length > 0 ? true : undefined), 10_000);
      expect(calls[0]!.at).toBeGreaterThanOrEqual(due - 1000);
      expect(calls[0]!.resume).toMatchObject({ attempts: 1, lastError: 'HTTP 503', retryAt: due });
      await sleep(300);
      expect(calls).toHaveLength(1);
    } finally {
      await notifier.drain(AbortSignal.timeout(1000));
      await queue.close();
      await shared.close();
    }
  });
});

describe('a webhook the shared queue gives up after all its attempts', () => {
  it('ends as failed with why, in the job and the delivery metric, instead of reading pending for good', async () => {
    // Once the job has ended, every read fails (a Redis that stays unreachable for the reader) until healed.
    await withWebhookRig(Infinity, { attempts: 3, backoffMs: 50 }, async ({ receiver, store, jobs, registry, warnings, submit }) => {
      const failedDeliveries = async () =>
        (await registry.getSingleMetric('conversation_risk_webhook_deliveries_total')?.get())?.values.find((v) => v.labels.outcome === 'failed')?.value ?? 0;
      const id = await submit('/never');
      await until(async () => ((await failedDeliveries()) === 1 ? true : undefined), 20_000);
      store.readsToFail = 0;
      const job = await jobs.get('key_a', id);
      expect(store.failedReads).toBe(3);
      expect(job?.status).toBe('done');
      expect(job?.webhook).toEqual({ status: 'failed', attempts: 0, last_error: 'Not sent: given up after 3 tries; the last could not read the job from the job store (Redis)' });
      expect(warnings).toContain('webhook delivery failed');
      expect(receiver.requests).toHaveLength(0);
    });
  });
});

describe('a deferred webhook the shared queue then gives up', () => {
  it('ends failed naming the receiver’s last answer, with the attempts its entry counted though the store could not record them', async () => {
    await withWebhookRig(0, { attempts: 3, backoffMs: 50 }, async ({ receiver, store, submit, webhookWhen }) => {
      // The attempt's own write and the deferral's fail; from the retry on, the job cannot be read.
      store.progressWritesToFail = 2;
      receiver.script({ status: 503, headers: { 'retry-after': '1' } });
      const id = await submit('/down');
      await receiver.waitFor(1);
      store.readsToFail = Infinity;
      await until(async () => (store.failedReads >= 3 ? true : undefined), 15_000);
      store.readsToFail = 0;
      const webhook = await webhookWhen(id, 'failed', 5000);
      expect(webhook).toEqual({
        status: 'failed',
        attempts: 1,
        last_error: 'Not delivered: the last attempt failed (HTTP 503); then given up after 3 tries; the last could not read the job from the job store (Redis)',
      });
      expect(receiver.requests).toHaveLength(1);
    });
  });
});

describe('a webhook whose last try is cut off by its replica’s shutdown', () => {
  it('is given up, and the give-up recorded, before the drain returns (so it does not read pending for good)', async () => {
    const shared = connectRedis({ url: suite.server.url, prefix: `t${randomUUID().slice(0, 8)}` });
    await shared.whenReady(5000);
    const notifier = new QueueNotifier(shared, 5000, { attempts: 1 });
    let started = false;
    const recorded: string[] = [];
    notifier.start(
      async (_job, _message, signal) => {
        started = true;
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        throw Object.assign(new Error('interrupted by shutdown; left for another replica'), { name: 'Interrupted' });
      },
      async (_job, _message, reason) => {
        await sleep(50);
        recorded.push(reason);
      },
    );
    try {
      await notifier.notify(randomUUID());
      await until(async () => (started ? true : undefined), 10_000);
      await notifier.drain(AbortSignal.timeout(100));
      expect(recorded).toEqual(['Not sent: given up after 1 try; the last was cut off: the replica delivering it stopped']);
    } finally {
      await shared.close();
    }
  });
});

describe('RedisJobStore reads a job’s results by its ids', () => {
  it('answers only the results stored, for ids named like built-in object members too (a failed job’s missing results)', async () => {
    const store = freshStore();
    const r = record(['constructor', '__proto__', 'toString', 'a']);
    expect(await store.reserve(leaseOf(r, 40), limits)).toBe('ok');
    expect(await store.create(r)).toEqual({ created: true });
    expect(await store.commit(r.id)).toBe(true);
    await store.markStarted(r.id, Date.now());
    await store.addResult(r.id, 'a', score);
    await store.addResult(r.id, 'toString', score);
    const results = await store.results((await store.get(r.id))!);
    expect(Object.keys(results).sort()).toEqual(['a', 'toString']);
    expect(results.a).toEqual(score);
  });
});
