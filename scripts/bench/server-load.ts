// The bench's runs against the real server, one function a step, each returning its figures for
// bench.json's `results`. run.ts calls them in this order, with the in-process engine loaded beside
// the server so that the paced comparison can alternate between the two, and then reads the server's
// peak RSS (cpu.ts):
//   warmUp           both sides, out of the measured runs
//   fullLoad         /predict at full load: throughput, latency, CPU per request
//   pacedComparison  server and in-process CPU per prediction at one offered rate
//   batchLoad        /batch_predict of 100 conversations
//   hugeWithHealth   500,000-character chats while /health is polled
import type { ChildProcess } from 'node:child_process';
import type autocannon from 'autocannon';
import { cpuSince, pacedCallsFor, percentile, threadCpu } from './cpu.ts';
import { KEY, call, cannon } from './http.ts';
import { CONCURRENCY, DURATION_S, PACED_ROUNDS, type Figures } from './settings.ts';

export type PredictLoad = (opts: Partial<autocannon.Options>) => Promise<autocannon.Result>;

const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

/** autocannon on /predict at CONCURRENCY connections, each request the next of `conversations` (cycling). */
export function predictLoad(base: string, conversations: readonly string[]): PredictLoad {
  const bodies = conversations.map((conversation) => JSON.stringify({ conversation }));
  let nextBody = 0;
  return (opts) =>
    cannon({
      url: `${base}/predict`,
      method: 'POST',
      headers,
      requests: [{ setupRequest: (req) => ({ ...req, body: bodies[nextBody++ % bodies.length] }) }],
      connections: CONCURRENCY,
      ...opts,
    });
}

/** Warm-up: JIT, ONNX arenas and connection setup out of the measured runs, on both sides. */
export async function warmUp(load: PredictLoad, scoreOne: () => Promise<unknown>): Promise<void> {
  await load({ connections: 4, amount: 200 });
  const warmUntil = performance.now() + 1000;
  while (performance.now() < warmUntil) await scoreOne();
}

/** /predict at full load for the bench's duration, with the CPU the server and the load generator spent per request. */
export async function fullLoad(load: PredictLoad, server: ChildProcess): Promise<Figures> {
  const serverBefore = threadCpu(server.pid ?? 0);
  const loadBefore = process.cpuUsage();
  const r1 = await load({ duration: DURATION_S });
  const served = Math.max(1, r1.requests.total);
  const serverCpu = cpuSince(server.pid ?? 0, serverBefore);
  const loadCpu = process.cpuUsage(loadBefore);
  return {
    // Answered requests per second: a non-2xx answer, a connection error or a timeout is not a prediction.
    single_rps: (r1.requests.total - r1.non2xx) / r1.duration,
    // autocannon counts timeouts among errors.
    single_failed: r1.non2xx + r1.errors,
    single_p50_ms: r1.latency.p50,
    single_p99_ms: r1.latency.p99,
    single_cpu_us_server_main: serverCpu.mainUs / served,
    single_cpu_us_server_total: serverCpu.totalUs / served,
    single_cpu_us_load_generator: (loadCpu.user + loadCpu.system) / served,
  };
}

/**
 * CPU per request depends on the request rate (a worker woken for each request works on cold caches),
 * and the server reaches a lower rate than the engine alone because the load generator and HTTP share
 * the cores. So the overhead ratio compares the two at one offered rate, 80 % of what the server
 * sustained at full load (`singleRps`), in alternating rounds so that neighbours hit both alike.
 */
export async function pacedComparison(load: PredictLoad, server: ChildProcess, scoreOne: () => Promise<unknown>, singleRps: number): Promise<Figures> {
  const rate = Math.max(50, Math.floor(0.8 * singleRps));
  const roundS = Math.max(1, DURATION_S / 2);
  const paced = { serverUs: 0, serverMainUs: 0, served: 0, inprocessUs: 0, inprocessMainUs: 0, calls: 0 };
  for (let round = 0; round < PACED_ROUNDS; round++) {
    const before = threadCpu(server.pid ?? 0);
    const r = await load({ overallRate: rate, duration: roundS });
    const used = cpuSince(server.pid ?? 0, before);
    paced.serverUs += used.totalUs;
    paced.serverMainUs += used.mainUs;
    paced.served += r.requests.total;
    const selfBefore = threadCpu(process.pid);
    paced.calls += await pacedCallsFor(rate, roundS, CONCURRENCY, scoreOne);
    const self = cpuSince(process.pid, selfBefore);
    paced.inprocessUs += self.totalUs;
    paced.inprocessMainUs += self.mainUs;
  }
  // The pacer's own timers run on the in-process side's main thread (autocannon paces the server from
  // outside it): measured with an empty call and taken off, so it is not counted as engine work.
  const pacerBefore = threadCpu(process.pid);
  const empty = await pacedCallsFor(rate, roundS, CONCURRENCY, () => new Promise((r) => setImmediate(r)));
  const pacerUs = cpuSince(process.pid, pacerBefore).mainUs / Math.max(1, empty);
  const serverTotal = paced.serverUs / Math.max(1, paced.served);
  const inprocessTotal = paced.inprocessUs / Math.max(1, paced.calls) - pacerUs;
  return {
    paced_rate: rate,
    paced_pacer_cpu_us: pacerUs,
    paced_cpu_us_server_total: serverTotal,
    paced_cpu_us_server_main: paced.serverMainUs / Math.max(1, paced.served),
    paced_cpu_us_inprocess_total: inprocessTotal,
    paced_cpu_us_inprocess_main: paced.inprocessMainUs / Math.max(1, paced.calls) - pacerUs,
    server_cpu_ratio: serverTotal / inprocessTotal,
  };
}

/** /batch_predict of the same 100 conversations, two calls in flight, for the bench's duration. */
export async function batchLoad(base: string, batch: readonly string[]): Promise<Figures> {
  const r2 = await cannon({
    url: `${base}/batch_predict`,
    method: 'POST',
    headers,
    body: JSON.stringify({ conversations: batch }),
    connections: 2,
    duration: DURATION_S,
  });
  return {
    batch_p50_ms: r2.latency.p50,
    batch_p99_ms: r2.latency.p99,
    batch_predictions_per_s: ((r2.requests.total - r2.non2xx) / r2.duration) * 100,
    batch_failed: r2.non2xx + r2.errors,
  };
}

/**
 * 500,000-character conversations (with speakers, flat, and with explain: the running score after
 * each turn, built and sent from the main thread), three times each, while /health is polled back
 * to back: every poll must answer 200 healthy.
 */
export async function hugeWithHealth(base: string, huge: string, hugeFlat: string): Promise<Figures> {
  const healthMs: number[] = [];
  const timed = async (path: string, conversation: string): Promise<number[]> => {
    const ms: number[] = [];
    for (let i = 0; i < 3; i++) {
      let done = false;
      // The poll's failure is kept and thrown once the long call is back, so the caller's cleanup still
      // stops the server (an unhandled rejection would end the process with it running).
      let pollError: Error | undefined;
      const poll = (async () => {
        while (!done) {
          const h = await call(base, 'GET', '/health');
          if (h.status !== 200 || !h.body.includes('"healthy"')) throw new Error(`/health answered ${h.status} during a 500k chat: ${h.body.slice(0, 200)}`);
          healthMs.push(h.ms);
        }
      })().catch((err: unknown) => {
        done = true;
        pollError = err instanceof Error ? err : new Error(String(err));
      });
      const r = await call(base, 'POST', path, JSON.stringify({ conversation }));
      done = true;
      await poll;
      if (pollError !== undefined) throw pollError;
      if (r.status !== 200) throw new Error(`500k conversation on ${path} answered ${r.status}: ${r.body.slice(0, 200)}`);
      ms.push(r.ms);
    }
    return ms;
  };
  const hugeMs = await timed('/predict', huge);
  const hugeFlatMs = await timed('/predict', hugeFlat);
  const explainedMs = await timed('/predict?explain=true', huge);
  return {
    huge_explain_ms_max: Math.max(...explainedMs),
    huge_ms_max: Math.max(...hugeMs),
    huge_ms_median: percentile(hugeMs, 50),
    huge_flat_ms_max: Math.max(...hugeFlatMs),
    health_during_huge_p99_ms: percentile(healthMs, 99),
    health_during_huge_max_ms: Math.max(...healthMs),
    health_samples: healthMs.length,
  };
}
