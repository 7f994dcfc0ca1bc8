// Which queued conversation is scored next, and by whom. One interface, two implementations: in
// process (memory/scheduler.ts: fair round-robin over keys, text in this process's memory only) and
// through BullMQ (redis/scheduler.ts: encrypted items in Redis, any replica's worker takes them).
import type { ScoreRequest } from '../scoring/types.ts';

export interface QueuedItem {
  jobId: string;
  keyId: string;
  /** Position in the job (and so which result it becomes). */
  index: number;
  /** The caller's conversation id. */
  id: string;
  request: ScoreRequest;
  /** Characters of the conversation: the budget it frees once finished. */
  chars: number;
  /** Items in its job: the job ends when that many are accounted for. */
  total: number;
}

/**
 * Scores one item and records what happened. `signal` aborts at the shutdown deadline; the handler
 * rejects only when the scheduler requeues interrupted items and the item was cut off, or the shared
 * store could not record it (JobsUnavailableError: run it again later).
 */
export type ItemHandler = (item: QueuedItem, signal: AbortSignal) => Promise<void>;
/**
 * An item that will never be scored: sealed under another key, or given up by a shared queue (its
 * replica kept dying). Its job must fail and the item be accounted for.
 */
export type UnreadableHandler = (item: QueuedItem, detail: string) => Promise<void>;

export interface Scheduler {
  /** True when an item cut off by this process's shutdown goes back to a queue other replicas read. */
  readonly requeuesInterrupted: boolean;
  /** Starts handing items to `handler`, at most `concurrency` at once in this process. */
  start(handler: ItemHandler, unreadable: UnreadableHandler): void;
  enqueue(items: QueuedItem[]): Promise<void>;
  /** Withdraws a failed job's items that have not started; returns them so their budget is freed. */
  cancel(jobId: string): QueuedItem[];
  /**
   * Stops taking new items and waits for those running here. When `deadline` aborts, running items are
   * aborted and the items this process still holds are returned (they will never run); a shared queue
   * keeps its items for the other replicas and returns none.
   */
  drain(deadline: AbortSignal): Promise<QueuedItem[]>;
}
