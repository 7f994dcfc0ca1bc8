// The job runner on the real engine (contract fixture model): bounded concurrency, overload handled by
// waiting, fairness between keys, gauges, and shutdown at a deadline.
import { Piscina } from 'piscina';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { until } from '../../helpers/wait.ts';
import { testConfig, FIXTURE_MODEL_DIR } from '../../helpers/app.ts';
import { JobService, type JobItem, type Jobs, type JobView } from '../../../src/jobs/jobs.ts';
import { createJobs } from '../../../src/jobs/memory/jobs.ts';
import { LocalNotifier } from '../../../src/jobs/memory/notifier.ts';
import { LocalScheduler } from '../../../src/jobs/memory/scheduler.ts';
import { MemoryJobStore } from '../../../src/jobs/memory/store.ts';
import type { Deliver, Notifier } from '../../../src/jobs/notifier.ts';
import type { ItemHandler, QueuedItem, Scheduler } from '../../../src/jobs/scheduler.ts';
import { JobsUnavailableError } from '../../../src/jobs/types.ts';
import { webhookMessageId } from '../../../src/webhooks/signing.ts';
import { createScorer, type EngineScorer } from '../../../src/scoring/scorer.ts';
import { ScoringError } from '../../../src/scoring/types.ts';
import type { ObservedEngine } from '../../../src/ops/observed-scoring.ts';
import { startReceiver, verifyStandardWebhook } from '../../helpers/webhook-receiver.ts';
import { jobScoring } from './job-scoring.ts';

const silent = { info: () => {}, warn: () => {} };

function items(n: number, turns = 20, prefix = 'c'): JobItem[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${i}`,
    request: {
      conversation: Array.from({ length: turns }, (_, k) => `user${(k % 2) + 1}: line ${k} of chat ${i} about homework and games`).join('\n'),
    },
  }));
}


async function settle(jobs: Jobs, key: string, id: string, timeoutMs = 30_000): Promise<JobView> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await jobs.get(key, id);
    if (job === undefined) throw new Error('job vanished');
    if (job.status === 'done' || job.status === 'failed') return job;
    if (Date.now() > deadline) throw new Error(`job still ${job.status}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function accepted(pending: ReturnType<Jobs['submit']>): Promise<JobView> {
  const result = await pending;
  if (!result.ok) throw new Error(`rejected: ${result.error.code}`);
  return result.job;
}

let scorer: EngineScorer;
beforeAll(async () => {
  // A queue of 2: the runner must meet "overloaded" as soon as live traffic is added.
  scorer = await createScorer({ modelDir: FIXTURE_MODEL_DIR, workers: 1, intraOpThreads: 1, maxQueue: 2, timeoutMs: 20_000 });
});
afterAll(async () => scorer.close());

const make = (env: Record<string, string> = {}, concurrency = 2) => {
  const registry = new Registry();
  const jobs = createJobs({ config: testConfig(env), ...jobScoring(scorer), registry, logger: silent, concurrency });
  return { jobs, registry };
};

describe('the runner feeds the scorer at a bounded concurrency', () => {
  it('never has more than `concurrency` conversations at the scorer at once', async () => {
    const { jobs } = make({}, 1);
    const job = await accepted(jobs.submit({ keyId: 'k', items: items(30) }));
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, scorer.inFlight + scorer.queueSize);
    }, 1);
    const done = await settle(jobs, 'k', job.job_id);
    clearInterval(sampler);
    expect(done.status).toBe('done');
    expect(peak).toBe(1);
    await jobs.drain(1000);
  });

  it('waits and retries when live traffic fills the scorer queue: the job still completes', async () => {
    const { jobs } = make({}, 3);
    const job = await accepted(jobs.submit({ keyId: 'k', items: items(40) }));
    // Live traffic competing for the 2-slot queue; some of it is refused 'overloaded' too.
    const live = await Promise.allSettled(
      Array.from({ length: 30 }, () => scorer.score([{ conversation: items(1, 40)[0]!.request.conversation }])),
    );
    expect(live.some((r) => r.status === 'rejected')).toBe(true);
    const done = await settle(jobs, 'k', job.job_id);
    expect(done.status).toBe('done');
    expect(Object.keys(done.results ?? {})).toHaveLength(40);
    await jobs.drain(1000);
  });

  it('serves keys round-robin: a small job of one key is not stuck behind a big job of another', async () => {
    const { jobs } = make({}, 1);
    const big = await accepted(jobs.submit({ keyId: 'a', items: items(100) }));
    const small = await accepted(jobs.submit({ keyId: 'b', items: items(2) }));
    const smallDone = await settle(jobs, 'b', small.job_id);
    expect(smallDone.status).toBe('done');
    const bigNow = (await jobs.get('a', big.job_id))!;
    expect(bigNow.status).toBe('running');
    expect(bigNow.progress.done).toBeLessThan(20);
    await settle(jobs, 'a', big.job_id);
    await jobs.drain(1000);
  });

  it('reports unfinished jobs and pending conversations as gauges', async () => {
    const { jobs, registry } = make({}, 1);
    await accepted(jobs.submit({ keyId: 'k', items: items(50) }));
    const during = await registry.metrics();
    expect(during).toMatch(/conversation_risk_jobs_queue_depth 1/);
    const pending = Number(/conversation_risk_job_items_pending (\d+)/.exec(during)?.[1]);
    expect(pending).toBeGreaterThan(40);
    await jobs.drain(30_000);
    const after = await registry.metrics();
    expect(after).toMatch(/conversation_risk_jobs_queue_depth 0/);
    expect(after).toMatch(/conversation_risk_job_items_pending 0/);
    expect(after).toMatch(/conversation_risk_jobs_total\{status="queued"\} 1/);
    expect(after).toMatch(/conversation_risk_jobs_total\{status="done"\} 1/);
  });
});

describe('a scoring worker that stops mid-item', () => {
  it('is a fault the item is tried again for: the job ends done with every result', async () => {
    const run = vi.spyOn(Piscina.prototype, 'run');
    const own = await createScorer({ modelDir: FIXTURE_MODEL_DIR, workers: 1, intraOpThreads: 1, maxQueue: 2, timeoutMs: 20_000 });
    try {
      const jobs = createJobs({ config: testConfig(), ...jobScoring(own), registry: new Registry(), logger: silent, concurrency: 1 });
      const long = 'user1: hello there, do you like music games and movies? tell me about your school day\n'.repeat(5600).slice(0, 500_000);
      const job = await accepted(jobs.submit({ keyId: 'k', items: [{ id: 'long', request: { conversation: long } }, ...items(2)] }));
      await until(async () => (own.inFlight > 0 ? true : undefined), 15_000, 5);
      await (run.mock.contexts.at(-1) as Piscina).threads[0]?.terminate();
      const done = await settle(jobs, 'k', job.job_id);
      expect(done).toMatchObject({ status: 'done', progress: { done: 3, total: 3 } });
      expect(Object.keys(done.results ?? {}).sort()).toEqual(['c0', 'c1', 'long']);
      await jobs.drain(1000);
    } finally {
      run.mockRestore();
      await own.close();
    }
  });
});

describe('retention', () => {
  it('past maxRetainedResults the oldest finished job is forgotten first, so memory stays bounded', async () => {
    const jobs = createJobs({ config: testConfig(), ...jobScoring(scorer), registry: new Registry(), logger: silent, maxRetainedResults: 5 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const job = await accepted(jobs.submit({ keyId: 'k', items: items(2, 4) }));
      await settle(jobs, 'k', job.job_id);
      ids.push(job.job_id);
    }
    expect(await jobs.get('k', ids[0]!)).toBeUndefined();
    expect((await jobs.get('k', ids[1]!))?.status).toBe('done');
    expect((await jobs.get('k', ids[2]!))?.status).toBe('done');
    await jobs.drain(1000);
  });

  it("a job forgotten early never takes back its Idempotency-Key from the job that claimed it after", async () => {
    const ttl = 3000;
    const jobs = createJobs({ config: testConfig({ JOB_RESULT_TTL_MS: String(ttl) }), ...jobScoring(scorer), registry: new Registry(), logger: silent, maxRetainedResults: 1 });
    const idempotency = { key: 'retry-1', fingerprint: 'same-body' };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const first = await accepted(jobs.submit({ keyId: 'k', items: items(1, 4), idempotency }));
    await settle(jobs, 'k', first.job_id);
    const firstDone = Date.now();
    await settle(jobs, 'other', (await accepted(jobs.submit({ keyId: 'other', items: items(1, 4) }))).job_id);
    expect(await jobs.get('k', first.job_id)).toBeUndefined();
    // The key is free again: a resubmission makes a new job, which takes the key.
    await sleep(ttl / 2);
    const second = await jobs.submit({ keyId: 'k', items: items(1, 4), idempotency });
    if (!second.ok) throw new Error(second.error.code);
    expect(second.replayed).toBe(false);
    await settle(jobs, 'k', second.job.job_id);
    // Past the first job's own TTL, inside the second's: a retry must still be answered by the second.
    await sleep(firstDone + ttl + ttl / 6 - Date.now());
    const retry = await jobs.submit({ keyId: 'k', items: items(1, 4), idempotency });
    if (!retry.ok) throw new Error(retry.error.code);
    expect(retry).toMatchObject({ replayed: true, job: { job_id: second.job.job_id } });
    await jobs.drain(1000);
  });
});

describe('admission', () => {
  it('refuses jobs while the model is not loaded', async () => {
    const down = await createScorer({ modelDir: '/nonexistent', workers: 1, intraOpThreads: 1, maxQueue: 2, timeoutMs: 1000 });
    const jobs = createJobs({ config: testConfig(), ...jobScoring(down), registry: new Registry(), logger: silent });
    const result = await jobs.submit({ keyId: 'k', items: items(1) });
    expect(result).toMatchObject({ ok: false, error: { code: 'model_unavailable' } });
    await down.close();
  });
});

describe('drain (shutdown)', () => {
  it('refuses new jobs from the moment it starts, and lets an accepted job finish', async () => {
    const { jobs } = make();
    const job = await accepted(jobs.submit({ keyId: 'k', items: items(20) }));
    const draining = jobs.drain(30_000);
    expect(await jobs.submit({ keyId: 'k', items: items(1) })).toMatchObject({ ok: false, error: { code: 'shutting_down' } });
    await draining;
    expect(await jobs.get('k', job.job_id)).toMatchObject({ status: 'done', progress: { done: 20, total: 20 } });
  });

  it('at the deadline, unfinished jobs end failed with a detail saying to resubmit, and free their budget', async () => {
    const { jobs, registry } = make({ JOB_MAX_ITEMS: '5000' }, 1);
    const big = await accepted(jobs.submit({ keyId: 'k', items: items(5000) }));
    const queued = await accepted(jobs.submit({ keyId: 'k', items: items(5) }));
    await jobs.drain(50);
    const a = (await jobs.get('k', big.job_id))!;
    expect(a.status).toBe('failed');
    expect(a.error).toMatch(/shut down.*resubmit/);
    expect(a.progress.done).toBeLessThan(5000);
    expect((await jobs.get('k', queued.job_id))!.status).toBe('failed');
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/conversation_risk_job_items_pending 0/);
    expect(metrics).toMatch(/conversation_risk_jobs_total\{status="failed"\} 2/);
  });

  it('reports a job cut off by shutdown: batch.failed with the results scored so far reaches the receiver in time', async () => {
    const receiver = await startReceiver();
    const secret = 'whsec_' + Buffer.alloc(32, 8).toString('base64');
    try {
      const env = { JOB_MAX_ITEMS: '5000', JOB_MAX_QUEUED_CHARS: '100000000', WEBHOOK_SECRET: secret, WEBHOOK_ALLOWED_HOSTS: receiver.hostPort, WEBHOOK_ALLOW_HTTP: 'true' };
      const { jobs } = make(env, 1);
      // 5,000 chats of 200 turns take seconds even on a fast machine; the drain leaves 300 ms for scoring.
      const job = await accepted(jobs.submit({ keyId: 'k', items: items(5000, 200), webhookUrl: receiver.url('/cut') }));
      await until(async () => ((await jobs.get('k', job.job_id))!.progress.done >= 3 ? true : undefined));
      const started = Date.now();
      await jobs.drain(500);
      expect(Date.now() - started).toBeLessThan(1500);
      expect(receiver.requests).toHaveLength(1);
      const hook = receiver.requests[0]!;
      expect(verifyStandardWebhook(secret, hook)).toBe(true);
      const payload = JSON.parse(hook.body);
      expect(payload.type).toBe('batch.failed');
      expect(payload.data.error).toMatch(/shut down.*resubmit/);
      const scored = Object.keys(payload.data.results).length;
      expect(scored).toBeGreaterThanOrEqual(3);
      expect(scored).toBe(payload.data.progress.done);
      expect(scored).toBeLessThan(5000);
    } finally {
      await receiver.close();
    }
  });
});

describe('drain (shutdown), the last item still running at the deadline', () => {
  it("a job whose last item was cut off mid-scoring reports batch.failed before the drain returns", async () => {
    const receiver = await startReceiver();
    const secret = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
    // An engine that holds every chat until its signal aborts, as the real scorer withdraws a queued
    // task: the job's only item is at the scorer when the scoring deadline comes.
    const held: ObservedEngine = {
      get ready() {
        return scorer.ready;
      },
      get manifest() {
        return scorer.manifest;
      },
      score: (requests, options) =>
        new Promise((_, reject) => {
          const signal = options?.signal;
          if (signal?.aborted) reject(new ScoringError('timeout', 'withdrawn'));
          signal?.addEventListener('abort', () => reject(new ScoringError('timeout', 'withdrawn')), { once: true });
        }),
    };
    try {
      const env = { WEBHOOK_SECRET: secret, WEBHOOK_ALLOWED_HOSTS: receiver.hostPort, WEBHOOK_ALLOW_HTTP: 'true' };
      const jobs = createJobs({ config: testConfig(env), ...jobScoring(held), registry: new Registry(), logger: silent, concurrency: 1 });
      const job = await accepted(jobs.submit({ keyId: 'k', items: items(1), webhookUrl: receiver.url('/last') }));
      await until(async () => ((await jobs.get('k', job.job_id))!.status === 'running' ? true : undefined));
      await jobs.drain(1000);
      // What a real shutdown sees: close-with-grace exits the process as soon as drain resolves.
      expect(receiver.requests).toHaveLength(1);
      expect(verifyStandardWebhook(secret, receiver.requests[0]!)).toBe(true);
      const payload = JSON.parse(receiver.requests[0]!.body);
      expect(payload.type).toBe('batch.failed');
      expect(payload.data.error).toMatch(/shut down.*resubmit/);
      expect((await jobs.get('k', job.job_id))!.status).toBe('failed');
    } finally {
      await receiver.close();
    }
  });
});

// The takeover itself, across real processes on Redis, is in redis/jobs.test.ts; here one process
// stands in for it, with the stopped replica's attempts already in the store.
describe('webhook delivery resumed from the attempts another replica recorded', () => {
  /**
   * A job's webhook, every attempt answered 500, until it fails: delivered by this process alone, or,
   * given `recorded`, taken over after a stopped replica recorded that in the store.
   */
  async function failedDelivery(env: Record<string, string>, recorded?: { attempts: number; firstAttemptAt?: number }) {
    const receiver = await startReceiver();
    receiver.script(...Array.from({ length: 10 }, () => ({ status: 500 })));
    try {
      const store = new MemoryJobStore();
      let deliver: Deliver | undefined;
      // The shared notifier's takeover, in one process: the stopped replica's attempts are in the store.
      const takeover: Notifier = {
        defersRetries: false,
        start: (d) => void (deliver = d),
        async notify(jobId) {
          await store.updateWebhook(jobId, recorded!);
          await deliver!(jobId, webhookMessageId(jobId), new AbortController().signal);
        },
        async drain() {},
      };
      const config = testConfig({
        WEBHOOK_SECRET: 'whsec_' + Buffer.alloc(32, 8).toString('base64'),
        WEBHOOK_ALLOWED_HOSTS: receiver.hostPort,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_RETRY_BASE_MS: '10',
        ...env,
      });
      const notifier = recorded === undefined ? new LocalNotifier() : takeover;
      const jobs = new JobService({ config, ...jobScoring(scorer), registry: new Registry(), logger: silent }, { store, scheduler: new LocalScheduler(1), notifier });
      const job = await accepted(jobs.submit({ keyId: 'k', items: items(2), webhookUrl: receiver.url('/takeover') }));
      const view = await until(async () => {
        const v = await jobs.get('k', job.job_id);
        return v?.webhook?.status === 'failed' ? v : undefined;
      });
      return { webhook: view.webhook, requests: receiver.requests.length, firstRequestAt: receiver.requests[0]?.at, store, jobId: job.job_id };
    } finally {
      await receiver.close();
    }
  }

  it("makes only the attempts that replica left: WEBHOOK_MAX_ATTEMPTS counts every replica's", async () => {
    const { webhook, requests } = await failedDelivery({ WEBHOOK_MAX_ATTEMPTS: '4' }, { attempts: 3 });
    expect(webhook?.attempts).toBe(4);
    expect(requests).toBe(1);
  });

  it('a delivery records when its first attempt began, for a replica that takes it over; set once, it is kept', async () => {
    const { store, jobId, firstRequestAt } = await failedDelivery({ WEBHOOK_MAX_ATTEMPTS: '3' });
    const recorded = (await store.get(jobId))?.webhook;
    expect(recorded?.attempts).toBe(3);
    expect(recorded?.firstAttemptAt).toBeLessThanOrEqual(firstRequestAt!);
    expect(recorded?.firstAttemptAt).toBeGreaterThan(firstRequestAt! - 1000);
    // Another replica's later start does not move it.
    await store.updateWebhook(jobId, { attempts: 4, firstAttemptAt: Date.now() });
    expect((await store.get(jobId))?.webhook).toMatchObject({ attempts: 4, firstAttemptAt: recorded!.firstAttemptAt });
  });

  it("counts WEBHOOK_MAX_RETRY_MS from that replica's first attempt, not from the job's completion", async () => {
    // The job completes now; the stopped replica's first attempt began 20 s ago, past the 10 s budget.
    const { webhook, requests } = await failedDelivery({ WEBHOOK_MAX_ATTEMPTS: '8', WEBHOOK_MAX_RETRY_MS: '10000' }, { attempts: 1, firstAttemptAt: Date.now() - 20_000 });
    expect(requests).toBe(0);
    expect(webhook).toMatchObject({ status: 'failed', attempts: 1 });
    expect(webhook?.last_error).toMatch(/budget used up/);
    // Within the budget, it goes on until WEBHOOK_MAX_ATTEMPTS.
    const within = await failedDelivery({ WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_MAX_RETRY_MS: '10000' }, { attempts: 1, firstAttemptAt: Date.now() - 1_000 });
    expect(within).toMatchObject({ requests: 2, webhook: { attempts: 3 } });
  });
});

describe('logs of a job item that could not be recorded', () => {
  it('name the error type, never its message (a message could quote the conversation)', async () => {
    class FailingStore extends MemoryJobStore {
      override async markStarted(): Promise<void> {
        throw new Error('MARKER-7c1 conversation words in an error message');
      }
    }
    const lines: Array<Record<string, unknown>> = [];
    const logger = { info: () => {}, warn: (o: Record<string, unknown>) => void lines.push(o) };
    const jobs = new JobService(
      { config: testConfig(), ...jobScoring(scorer), registry: new Registry(), logger },
      { store: new FailingStore(), scheduler: new LocalScheduler(1), notifier: new LocalNotifier() },
    );
    const job = await accepted(jobs.submit({ keyId: 'k', items: items(2) }));
    await settle(jobs, 'k', job.job_id);
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain('MARKER-7c1');
    expect(lines[0]).toMatchObject({ error: 'Error' });
  });
});

describe('a submission that cannot be queued leaves nothing behind', () => {
  /** The local queue, whose first enqueue fails (a queue that could not be reached). */
  class FailingOnceScheduler extends LocalScheduler {
    failures = 1;
    override async enqueue(items: QueuedItem[]): Promise<void> {
      if (this.failures-- > 0) throw new Error('queue unreachable');
      await super.enqueue(items);
    }
  }

  it('answers unavailable, gives the budget and the Idempotency-Key back, and keeps no job', async () => {
    const registry = new Registry();
    const jobs = new JobService(
      { config: testConfig({ JOB_MAX_QUEUED_PER_KEY: '1' }), ...jobScoring(scorer), registry, logger: silent },
      { store: new MemoryJobStore(), scheduler: new FailingOnceScheduler(2), notifier: new LocalNotifier() },
    );
    const idempotency = { key: 'same', fingerprint: 'f1' };
    await expect(jobs.submit({ keyId: 'k', items: items(3), idempotency })).rejects.toBeInstanceOf(JobsUnavailableError);
    const gauges = await registry.metrics();
    expect(gauges).toMatch(/conversation_risk_jobs_queue_depth 0/);
    expect(gauges).toMatch(/conversation_risk_job_items_pending 0/);
    // With JOB_MAX_QUEUED_PER_KEY=1, a slot still held would refuse this; a kept claim would replay a dead job.
    const job = await accepted(jobs.submit({ keyId: 'k', items: items(3), idempotency }));
    expect((await settle(jobs, 'k', job.job_id)).progress).toEqual({ done: 3, total: 3 });
  });
});

describe('a shared queue runs an item again when the store could not record it', () => {
  /** Runs items one by one and, as BullMQ does after a DelayedError, runs an item again when it throws. */
  class RerunningQueue implements Scheduler {
    readonly requeuesInterrupted = true;
    #handler: ItemHandler | undefined;
    runs = 0;
    start(handler: ItemHandler): void {
      this.#handler = handler;
    }
    async enqueue(items: QueuedItem[]): Promise<void> {
      void (async () => {
        for (const item of items) {
          for (let attempt = 0; attempt < 5; attempt++) {
            this.runs++;
            try {
              await this.#handler!(item, new AbortController().signal);
              break;
            } catch (err) {
              if (!(err instanceof JobsUnavailableError)) throw err;
            }
          }
        }
      })();
    }
    cancel(): QueuedItem[] {
      return [];
    }
    async drain(): Promise<QueuedItem[]> {
      return [];
    }
  }

  it('queues the webhook on the rerun when the first run ended the job but could not queue it', async () => {
    const receiver = await startReceiver();
    try {
      const env = { WEBHOOK_SECRET: 'whsec_' + Buffer.alloc(32, 8).toString('base64'), WEBHOOK_ALLOWED_HOSTS: receiver.hostPort, WEBHOOK_ALLOW_HTTP: 'true' };
      let failures = 1;
      const local = new LocalNotifier();
      // The first notify finds Redis gone, after the job was already recorded as ended.
      const flaky: Notifier = {
        defersRetries: false,
        start: (d) => local.start(d),
        async notify(jobId) {
          if (failures-- > 0) throw new JobsUnavailableError('the webhook queue (Redis) cannot be reached');
          await local.notify(jobId);
        },
        drain: (deadline) => local.drain(deadline),
      };
      const queue = new RerunningQueue();
      const jobs = new JobService(
        { config: testConfig(env), ...jobScoring(scorer), registry: new Registry(), logger: silent },
        { store: new MemoryJobStore(), scheduler: queue, notifier: flaky },
      );
      const job = await accepted(jobs.submit({ keyId: 'k', items: items(2), webhookUrl: receiver.url('/rerun') }));
      expect((await settle(jobs, 'k', job.job_id)).status).toBe('done');
      await receiver.waitFor(1, 10_000);
      expect(receiver.requests.filter((r) => r.path === '/rerun')).toHaveLength(1);
      // Two items, the last one run twice.
      expect(queue.runs).toBe(3);
    } finally {
      await receiver.close();
    }
  });
});
