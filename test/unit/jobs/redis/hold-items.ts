// A child process for jobs-takeover.test.ts: one replica's item worker (the real QueueScheduler,
// JOB_LOCK_MS from argv) that takes queued items and never finishes them, so its locks are renewed
// until the test kills it. Prints "ready" once started and "took <job>.<index>" per item.
// Usage: node test/unit/jobs/redis/hold-items.ts <redis url> <key prefix> <lock ms>
import { Registry } from 'prom-client';
import { QueueScheduler } from '../../../../src/jobs/redis/scheduler.ts';
import { Sealer } from '../../../../src/jobs/redis/sealing.ts';
import { connectRedis } from '../../../../src/ops/redis.ts';

const [url = '', prefix = '', lockMs = ''] = process.argv.slice(2);
const redis = connectRedis({ url, prefix });
await redis.whenReady(5000);
const scheduler = new QueueScheduler({ redis, sealer: new Sealer(Buffer.alloc(32, 1)), concurrency: 4, lockMs: Number(lockMs), registry: new Registry() });
scheduler.start(
  async (item) => {
    process.stdout.write(`took ${item.jobId}.${item.index}\n`);
    await new Promise(() => {});
  },
  async () => {},
);
process.stdout.write('ready\n');
