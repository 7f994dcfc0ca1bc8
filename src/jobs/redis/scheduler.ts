// Scheduling through BullMQ: every conversation of a job is one queued item in Redis, sealed
// (sealing.ts), taken by whichever replica's worker is free. A replica killed mid-item loses nothing:
// its lock lapses after JOB_LOCK_MS and BullMQ's stalled-job check hands the item to another worker.
// Fairness between keys: an item's priority is how many of its key's items wait before it, so a key's
// first item outranks another key's hundredth (BullMQ runs lower priorities first).
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';
import { PREFIX } from '../../ops/metrics.ts';
import { answerWithin, LIMITER_TIMEOUT_MS, type SharedRedis } from '../../ops/redis.ts';
import { drainQueueWorker } from './drain.ts';
import { lockOptions } from './locks.ts';
import type { ItemHandler, QueuedItem, Scheduler, UnreadableHandler } from '../scheduler.ts';
import type { Sealer } from './sealing.ts';
import { JobsUnavailableError } from '../types.ts';
import { exhausted, GiveUps } from './give-up.ts';

const QUEUE = 'items';
/** BullMQ's largest priority. */
const MAX_PRIORITY = 2_097_152;
/** Tries per item: each shutdown that cuts an item off uses one. */
const ITEM_ATTEMPTS = 5;
/** How long an item whose result could not be recorded waits before it runs again. */
const STORE_RETRY_MS = 2000;

interface ItemData {
  job: string;
  key: string;
  index: number;
  id: string;
  chars: number;
  total: number;
  /** The ScoreRequest, AES-256-GCM sealed and bound to `${job}:${index}`. */
  sealed: string;
}

const DECR_FLOOR = `
local v = redis.call('DECR', KEYS[1])
if v < 0 then redis.call('SET', KEYS[1], 0) end
return 0`;

export interface QueueSchedulerOptions {
  redis: SharedRedis;
  sealer: Sealer;
  /** Items this replica scores at once. */
  concurrency: number;
  /** How long a replica may go silent before its items are given to another (BullMQ lock and stalled check). */
  lockMs: number;
  registry: Registry;
}

export class QueueScheduler implements Scheduler {
  readonly requeuesInterrupted = true;
  readonly #redis: SharedRedis;
  readonly #sealer: Sealer;
  readonly #options: QueueSchedulerOptions;
  readonly #queue: Queue;
  readonly #stop = new AbortController();
  readonly #giveUps = new GiveUps(this.#stop.signal);
  readonly #stalled: Counter;
  #worker: Worker | undefined;

  constructor(options: QueueSchedulerOptions) {
    this.#options = options;
    this.#redis = options.redis;
    this.#sealer = options.sealer;
    this.#queue = new Queue(QUEUE, { connection: options.redis.queue as Redis, prefix: options.redis.prefix });
    // Submissions must fail fast while Redis is down; BullMQ's own error events are reported by readiness.
    this.#queue.on('error', () => {});
    const queue = this.#queue;
    const registers = [options.registry];
    new Gauge({
      name: `${PREFIX}job_queue_items`,
      help: 'Queued conversations in the shared (Redis) job queue, by state',
      labelNames: ['state'],
      registers,
      async collect() {
        try {
          const c = await answerWithin(queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed'), LIMITER_TIMEOUT_MS);
          this.set({ state: 'waiting' }, (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0));
          this.set({ state: 'active' }, c.active ?? 0);
          this.set({ state: 'failed' }, c.failed ?? 0);
        } catch {
          this.reset();
        }
      },
    });
    this.#stalled = new Counter({
      name: `${PREFIX}job_stalled_recoveries_total`,
      help: 'Queued conversations whose replica stopped mid-item and that this replica put back in the queue',
      registers,
    });
  }

  start(handler: ItemHandler, unreadable: UnreadableHandler): void {
    const worker = new Worker<ItemData>(
      QUEUE,
      async (job: Job<ItemData>, token?: string) => {
        const d = job.data;
        await this.#redis.command.eval(DECR_FLOOR, 1, this.#waitingKey(d.key)).catch(() => undefined);
        const meta = { jobId: d.job, keyId: d.key, index: d.index, id: d.id, chars: d.chars, total: d.total };
        let request;
        try {
          request = this.#sealer.open(d.sealed, `${d.job}:${d.index}`);
        } catch {
          const detail = 'A queued conversation could not be decrypted (REDIS_ENCRYPTION_KEY_FILE differs between replicas)';
          await unreadable({ ...meta, request: { conversation: '' } }, detail);
          return;
        }
        try {
          await handler({ ...meta, request }, this.#stop.signal);
        } catch (err) {
          // The job store (Redis) went away mid-item: the item waits in the queue and runs again,
          // without using one of its attempts (those count replicas that stopped). BullMQ's connection
          // waits for Redis, so the move happens once it is back; an outage longer than the lock lets
          // the lock lapse instead, the move fails, and the stalled check hands the item back.
          if (!(err instanceof JobsUnavailableError) || this.#stop.signal.aborted) throw err;
          await job.moveToDelayed(Date.now() + STORE_RETRY_MS, token).catch(() => undefined);
          throw new DelayedError();
        }
      },
      {
        connection: this.#redis.blocking(),
        prefix: this.#redis.prefix,
        concurrency: Math.max(1, this.#options.concurrency),
        ...lockOptions(this.#options.lockMs),
        // An item whose replica keeps dying is tried a few times, then its job fails.
        maxStalledCount: 3,
        removeOnComplete: { count: 0 },
        removeOnFail: { count: 0 },
      },
    );
    worker.on('stalled', () => this.#stalled.inc());
    worker.on('error', () => {});
    // BullMQ gives an item up after its attempts (an interruption each) or after maxStalledCount
    // lapsed locks, without calling the processor again: its job must not stay 'running' forever.
    worker.on('failed', (job: Job<ItemData> | undefined, err: Error) => {
      if (job === undefined) return;
      if (!exhausted(job, err)) return;
      const d = job.data;
      const item = { jobId: d.job, keyId: d.key, index: d.index, id: d.id, chars: d.chars, total: d.total, request: { conversation: '' } };
      // Handed back again while the store cannot be reached: the item has left the queue, so nothing
      // else will count it, and its job would stay running for good.
      const detail = `Conversation ${JSON.stringify(d.id)} could not be scored: the replicas running it stopped repeatedly`;
      this.#giveUps.record(() => unreadable(item, detail));
    });
    this.#worker = worker;
  }

  #waitingKey(keyId: string): string {
    return `${this.#redis.prefix}:waiting:${keyId}`;
  }

  async enqueue(items: QueuedItem[]): Promise<void> {
    if (items.length === 0) return;
    const keyId = (items[0] as QueuedItem).keyId;
    const end = await this.#redis.command.incrby(this.#waitingKey(keyId), items.length);
    const first = end - items.length;
    await this.#queue.addBulk(
      items.map((item, i) => ({
        name: 'score',
        data: {
          job: item.jobId,
          key: item.keyId,
          index: item.index,
          id: item.id,
          chars: item.chars,
          total: item.total,
          sealed: this.#sealer.seal(item.request, `${item.jobId}:${item.index}`),
        } satisfies ItemData,
        opts: {
          // One queue entry per job and position, however often a submission is retried.
          jobId: `${item.jobId}.${item.index}`,
          priority: Math.min(MAX_PRIORITY, first + i + 1),
          // An item cut off by its replica's shutdown goes back to the queue (a retry) for another one.
          attempts: ITEM_ATTEMPTS,
          // The sealed text is deleted as soon as the item is scored (or given up).
          removeOnComplete: true,
          removeOnFail: true,
        },
      })),
    );
  }

  cancel(): QueuedItem[] {
    // Items of a failed job stay queued and are skipped (without scoring) by whichever worker takes them.
    return [];
  }

  async drain(deadline: AbortSignal): Promise<QueuedItem[]> {
    // Takes no new item and waits for those running here; the rest stay queued for other replicas.
    await drainQueueWorker(this.#worker, this.#queue, this.#stop, deadline);
    await this.#giveUps.settle(this.#worker);
    return [];
  }
}
