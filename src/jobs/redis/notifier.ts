// Webhooks through BullMQ: each finished job's webhook is its own queued job (one per batch job, by
// id), delivered by whichever replica takes it, with the delivery's own retries and backoff. If that
// replica dies mid-delivery, the stalled check gives it to another; receivers deduplicate on the
// webhook-id, the job's own (signing.ts webhookMessageId). Between a delivery's retries the entry
// waits in BullMQ's delayed set, not in a worker slot. One the queue gives up after all its
// attempts is recorded as failed, so its job's webhook does not read 'pending' for good.
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { SharedRedis } from '../../ops/redis.ts';
import { drainQueueWorker } from './drain.ts';
import { lockOptions, updateDataWhileLocked } from './locks.ts';
import type { Deliver, DeliveryProgress, GaveUp, Notifier } from '../notifier.ts';
import { webhookMessageId } from '../../webhooks/signing.ts';
import { exhausted, GiveUps, stalledOut } from './give-up.ts';
import { JobsUnavailableError } from '../types.ts';

const QUEUE = 'webhooks';
const WEBHOOK_JOB_ATTEMPTS = 8;
const WEBHOOK_JOB_BACKOFF_MS = 2000;
/**
 * Deliveries a replica runs at once. A slot is held for one attempt at a time (at most
 * WEBHOOK_TIMEOUT_MS), never for a backoff, so a few dead receivers cannot hold up the others.
 */
const WEBHOOK_CONCURRENCY = 32;
/** How early a deferred retry may start (clocks of replicas differ a little) before it is put back to wait. */
const EARLY_START_TOLERANCE_MS = 1000;

export interface QueueNotifierOptions {
  /** Tries of one webhook (a store read failing, or its replica stopping, uses one); tests shorten them. */
  attempts?: number;
  /** The first retry's delay; each later one doubles. */
  backoffMs?: number;
  /** Deliveries this replica runs at once (default 32); tests lower it. */
  concurrency?: number;
}

interface WebhookData {
  job: string;
  /** webhookMessageId(job); kept in the entry since deliveries queued by earlier releases hold a random id. */
  message: string;
  /** Where a deferred retry resumes: kept in the entry, so it holds even when the job store could not record it. */
  resume?: DeliveryProgress;
}

export class QueueNotifier implements Notifier {
  readonly defersRetries = true;
  readonly #redis: SharedRedis;
  readonly #lockMs: number;
  readonly #queue: Queue;
  readonly #stop = new AbortController();
  readonly #attempts: number;
  readonly #backoffMs: number;
  readonly #concurrency: number;
  readonly #giveUps = new GiveUps(this.#stop.signal);
  #worker: Worker | undefined;

  constructor(redis: SharedRedis, lockMs: number, options: QueueNotifierOptions = {}) {
    this.#redis = redis;
    this.#lockMs = lockMs;
    this.#attempts = options.attempts ?? WEBHOOK_JOB_ATTEMPTS;
    this.#backoffMs = options.backoffMs ?? WEBHOOK_JOB_BACKOFF_MS;
    this.#concurrency = options.concurrency ?? WEBHOOK_CONCURRENCY;
    this.#queue = new Queue(QUEUE, { connection: redis.queue as Redis, prefix: redis.prefix });
    this.#queue.on('error', () => {});
  }

  start(deliver: Deliver, gaveUp: GaveUp): void {
    const worker = new Worker<WebhookData>(
      QUEUE,
      async (job: Job<WebhookData>, token?: string) => {
        const due = job.data.resume?.retryAt;
        // Run before its retry was due: the progress was saved but the move to the delayed set failed,
        // and the queue's own backoff ran it early. It waits again, as the receiver asked.
        if (due !== undefined && due - Date.now() > EARLY_START_TOLERANCE_MS) {
          await job.moveToDelayed(due, token);
          throw new DelayedError();
        }
        const outcome = await deliver(job.data.job, job.data.message, this.#stop.signal, job.data.resume);
        if (outcome === undefined) return;
        // The retry waits in the delayed set, holding no slot; whichever replica is free runs it when
        // due (not an attempt of the entry's own: those count store failures and stopped replicas).
        // Progress not saved (Redis failing) still waits the retry's time: the job store has the
        // attempts, and the larger count is the one used. A run whose lock lapsed saves nothing: the
        // replica that took the entry over owns its progress (and the move below refuses this run).
        await updateDataWhileLocked(this.#redis.queue, job, token, { ...job.data, resume: outcome.progress }).catch(() => false);
        await job.moveToDelayed(outcome.retryAt, token);
        throw new DelayedError();
      },
      {
        connection: this.#redis.blocking(),
        prefix: this.#redis.prefix,
        concurrency: this.#concurrency,
        ...lockOptions(this.#lockMs),
        removeOnComplete: { count: 0 },
        removeOnFail: { count: 0 },
      },
    );
    worker.on('error', () => {});
    // BullMQ calls nothing after an entry's last attempt (or its last lapsed lock): the job's webhook
    // would read 'pending' for good, and no replica would ever send it.
    worker.on('failed', (job: Job<WebhookData> | undefined, err: Error) => {
      if (job === undefined) return;
      if (!exhausted(job, err)) return;
      const tries = job.attemptsMade === 1 ? '1 try' : `${job.attemptsMade} tries`;
      const resume = job.data.resume;
      const queued = `given up after ${tries}; the last ${lastTry(err)}`;
      // Sent before, by a run that deferred its retry: say how those attempts ended too.
      const reason = resume === undefined ? `Not sent: ${queued}` : `Not delivered: the last attempt failed (${resume.lastError ?? 'no cause recorded'}); then ${queued}`;
      this.#giveUps.record(() => gaveUp(job.data.job, job.data.message, reason, resume?.attempts));
    });
    this.#worker = worker;
  }

  async notify(jobId: string): Promise<void> {
    // The queue id makes a second notify for the same job a no-op, whichever replica sends it.
    try {
      await this.#queue.add('deliver', { job: jobId, message: webhookMessageId(jobId) } satisfies WebhookData, {
        jobId: `webhook-${jobId}`,
        // A delivery cut off by its replica's shutdown, or that could not read the job from the store,
        // is tried again, by any replica: the backoff (2 s doubling, about 4 min over the attempts)
        // outlasts a Redis failover, so one failed read does not lose the webhook.
        attempts: this.#attempts,
        backoff: { type: 'exponential', delay: this.#backoffMs },
        removeOnComplete: true,
        removeOnFail: true,
      });
    } catch (err) {
      // As the store's failures: the item that ended the job stays queued and queues the webhook on its rerun.
      throw new JobsUnavailableError('the webhook queue (Redis) cannot be reached', { cause: err });
    }
  }

  async drain(deadline: AbortSignal): Promise<void> {
    // Undelivered webhooks stay queued in Redis for the other replicas.
    await drainQueueWorker(this.#worker, this.#queue, this.#stop, deadline);
    await this.#giveUps.settle(this.#worker);
  }
}

/** Why the last try failed, as the job's webhook `last_error` says it. */
function lastTry(err: Error): string {
  if (err instanceof JobsUnavailableError) return 'could not read the job from the job store (Redis)';
  if (err.name === 'Interrupted' || stalledOut(err)) return 'was cut off: the replica delivering it stopped';
  return `failed: ${err.name}`;
}
