// The Preview /v2 interface: registered inside the protected context (auth, per-key rate limit)
// with prefix /v2. Owns the batch jobs and ties their shutdown to the app's close.
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import type { ProtectedRouteDeps } from '../deps.ts';
import { toV2Prediction } from '../../http/answers.ts';
import type { JobsDeps } from '../../jobs/jobs.ts';
import { createJobs } from '../../jobs/memory/jobs.ts';
import { loadSealingKey, Sealer } from '../../jobs/redis/sealing.ts';
import type { Jobs } from '../../jobs/types.ts';
import { v2BatchRoutes } from './batch.ts';
import { v2PredictRoute } from './predict.ts';

/** Share of SHUTDOWN_GRACE_MS given to jobs; the rest is left for closing the scorer and exiting. */
const DRAIN_SHARE = 0.8;

export interface V2Options extends ProtectedRouteDeps {
  /** Conversations scored at once for batch jobs (default 2), leaving the rest of the pool to live traffic. */
  jobConcurrency?: number;
  /** Receives the jobs instance (tests, diagnostics). */
  onJobs?: (jobs: Jobs) => void;
}

export async function v2Routes(app: FastifyInstance, deps: V2Options): Promise<void> {
  const { config, scoring, metrics, shared } = deps;
  const jobsDeps: JobsDeps = {
    config,
    scorer: scoring,
    shape: toV2Prediction,
    registry: metrics?.registry ?? new Registry(),
    logger: deps.logger.child({ component: 'jobs' }),
    ...(deps.jobConcurrency === undefined ? {} : { concurrency: deps.jobConcurrency }),
  };
  // The key file was checked at start (config.ts); REDIS_URL without it never gets this far.
  // BullMQ is loaded only when Redis is configured.
  const jobs =
    shared === undefined || config.REDIS_ENCRYPTION_KEY_FILE === undefined
      ? createJobs(jobsDeps)
      : (await import('../../jobs/redis/jobs.ts')).createSharedJobs(jobsDeps, {
          redis: shared,
          sealer: new Sealer(loadSealingKey(config.REDIS_ENCRYPTION_KEY_FILE)),
          lockMs: config.JOB_LOCK_MS,
        });
  deps.onJobs?.(jobs);

  let closingSince = Date.now();
  app.addHook('preClose', async () => {
    closingSince = Date.now();
    jobs.stopAccepting();
  });
  // onClose runs once the server has stopped taking requests; the scorer is closed after the app.
  app.addHook('onClose', async () => {
    const left = closingSince + config.SHUTDOWN_GRACE_MS * DRAIN_SHARE - Date.now();
    await jobs.drain(left);
  });

  // Not `deps` itself: it carries the `/v2` prefix this plugin was registered with.
  await app.register(v2PredictRoute, { scoring });
  await app.register(v2BatchRoutes, { jobs, maxItems: config.JOB_MAX_ITEMS });
}
