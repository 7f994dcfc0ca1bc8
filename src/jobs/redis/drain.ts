// Shutting down a BullMQ worker and its queue within a deadline: no new work is taken, work running
// here may finish until the deadline, then it is aborted (`stop`) and the worker force-closed. What is
// still queued, and what was cut off, stays in Redis for the other replicas.
import type { Queue, Worker } from 'bullmq';
import { untilAborted } from '../../ops/redis.ts';

export async function drainQueueWorker(worker: Worker | undefined, queue: Queue, stop: AbortController, deadline: AbortSignal): Promise<void> {
  const onDeadline = (): void => {
    stop.abort(deadline.reason);
    void worker?.close(true);
  };
  if (deadline.aborted) onDeadline();
  deadline.addEventListener('abort', onDeadline, { once: true });
  try {
    await untilAborted(Promise.all([worker?.close(), queue.close()]), deadline);
  } catch {
    // Closing during an outage may fail; nothing is lost, the work stays in Redis.
  } finally {
    deadline.removeEventListener('abort', onDeadline);
  }
}
