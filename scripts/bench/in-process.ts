// The bench's in-process runs: the same conversations through createScorer at the same concurrency,
// no HTTP, and what HTTP adds over them. Each returns its figures for bench.json's `results`.
import type { EngineScorer } from '../../src/scoring/scorer.ts';
import { callsFor, cpuSince, threadCpu } from './cpu.ts';
import { CONCURRENCY, DURATION_S, type Figures } from './settings.ts';

/**
 * Single conversations (`scoreOne`) at CONCURRENCY, with the CPU spent per prediction; batches of
 * `batch`, two calls in flight (the batch run's counterpart); and what explain costs on a 40-turn chat.
 */
export async function inProcess(scorer: EngineScorer, scoreOne: () => Promise<unknown>, singles: readonly string[], batch: readonly string[]): Promise<Figures> {
  const results: Figures = {};
  const selfBefore = threadCpu(process.pid);
  const inproc = await callsFor(DURATION_S, CONCURRENCY, scoreOne);
  results.inprocess_pred_per_s = inproc.calls / inproc.seconds;
  const selfCpu = cpuSince(process.pid, selfBefore);
  results.inprocess_cpu_us_main = selfCpu.mainUs / Math.max(1, inproc.calls);
  results.inprocess_cpu_us_total = selfCpu.totalUs / Math.max(1, inproc.calls);

  // The batch run's counterpart: the same 100 conversations per call, two calls in flight.
  const items = batch.map((conversation) => ({ conversation }));
  const batched = await callsFor(DURATION_S, 2, () => scorer.score(items));
  results.inprocess_batch_pred_per_s = (batched.calls * items.length) / batched.seconds;

  // What explain costs on a 40-turn chat: one call at a time, plain and explained runs interleaved so
  // drift on a shared machine hits both alike.
  let plainMs = 0;
  let explainMs = 0;
  for (let round = 0; round < 10; round++) {
    let t0 = performance.now();
    for (let i = 0; i < 50; i++) await scorer.score([{ conversation: singles[i] as string }]);
    plainMs += performance.now() - t0;
    t0 = performance.now();
    for (let i = 0; i < 50; i++) await scorer.score([{ conversation: singles[i] as string, explain: true }]);
    explainMs += performance.now() - t0;
  }
  results.explain_cost_ratio = explainMs / plainMs;
  return results;
}

/** HTTP's overhead over in-process scoring, from throughput and from CPU time, out of the figures so far. */
export function httpOverheads(r: Figures): Figures {
  // The CPU ratio: what one HTTP prediction costs the machine (server and load generator) beyond what
  // one in-process prediction costs. Less sensitive to neighbours.
  const httpCpu = (r.single_cpu_us_server_total ?? NaN) + (r.single_cpu_us_load_generator ?? NaN);
  return {
    http_overhead: 1 - (r.single_rps ?? NaN) / (r.inprocess_pred_per_s ?? NaN),
    http_overhead_batch: 1 - (r.batch_predictions_per_s ?? NaN) / (r.inprocess_batch_pred_per_s ?? NaN),
    http_overhead_cpu: 1 - (r.inprocess_cpu_us_total ?? NaN) / httpCpu,
  };
}
