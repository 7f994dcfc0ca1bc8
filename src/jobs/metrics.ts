// The jobs' metrics, registered on the service's shared prom-client registry.
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { PREFIX } from '../ops/metrics.ts';
import type { DeliveryMetrics } from '../webhooks/delivery.ts';

export type JobStatusLabel = 'queued' | 'done' | 'failed' | 'rejected';
export type DeliveryOutcome = 'delivered' | 'failed';

/** The jobs' metrics; `attempt` (DeliveryMetrics) is what webhook delivery counts each HTTP attempt with. */
export interface JobMetrics extends DeliveryMetrics {
  /** A job reached a status (queued on accept, done or failed at the end, rejected at submit). */
  jobStatus(status: JobStatusLabel): void;
  /** A webhook message's final outcome, after all its attempts. */
  delivery(outcome: DeliveryOutcome): void;
}

/** Jobs accepted and not yet done or failed, and conversations accepted and not yet scored, across all jobs. */
export type JobCounts = () => Promise<{ unfinishedJobs: number; pendingItems: number }>;

export function createJobMetrics(registry: Registry, counts: JobCounts): JobMetrics {
  const registers = [registry];
  const jobs = new Counter({
    name: `${PREFIX}jobs_total`,
    help: 'Batch jobs (/v2/predict/batch) by the status they reached',
    labelNames: ['status'],
    registers,
  });
  // Gauges read live values at scrape time, so they cannot drift from the job store.
  new Gauge({
    name: `${PREFIX}jobs_queue_depth`,
    help: 'Batch jobs accepted and not yet finished (queued or running)',
    registers,
    async collect() {
      this.set((await counts().catch(() => ({ unfinishedJobs: Number.NaN }))).unfinishedJobs);
    },
  });
  new Gauge({
    name: `${PREFIX}job_items_pending`,
    help: 'Conversations in batch jobs waiting to be scored',
    registers,
    async collect() {
      this.set((await counts().catch(() => ({ pendingItems: Number.NaN }))).pendingItems);
    },
  });
  const deliveries = new Counter({
    name: `${PREFIX}webhook_deliveries_total`,
    help: 'Webhook messages by final outcome after all attempts',
    labelNames: ['outcome'],
    registers,
  });
  const attempts = new Histogram({
    name: `${PREFIX}webhook_delivery_duration_seconds`,
    help: 'Duration of each webhook HTTP attempt, by result',
    labelNames: ['result'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  return {
    jobStatus: (status) => jobs.inc({ status }),
    delivery: (outcome) => deliveries.inc({ outcome }),
    attempt: (result, seconds) => attempts.observe({ result }, seconds),
  };
}
