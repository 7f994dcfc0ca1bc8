// Jobs in this process's memory, the default: the in-memory store, the in-process scheduler and
// notifier, put together.
import { JobService, type JobsDeps } from '../jobs.ts';
import type { Jobs } from '../types.ts';
import { LocalNotifier } from './notifier.ts';
import { LocalScheduler } from './scheduler.ts';
import { MemoryJobStore } from './store.ts';

/** Jobs in this process's memory: the default, and what `npm start` runs without Redis. */
export function createJobs(deps: JobsDeps): Jobs {
  const store = new MemoryJobStore({
    ...(deps.maxRetainedResults === undefined ? {} : { maxRetainedResults: deps.maxRetainedResults }),
    onEvict: (jobId) => deps.logger.warn({ job_id: jobId }, 'finished job forgotten before its TTL: retained results at their limit'),
  });
  return new JobService(deps, { store, scheduler: new LocalScheduler(deps.concurrency ?? 2), notifier: new LocalNotifier() });
}
