// npm run bench: starts the real server (TLS on, a known key) and measures what the speed and size
// targets name (issue 2's service targets and the floor issue "The model reads real chats" sets for
// the model), then scores the same conversations in-process to show the HTTP overhead. Prints a table
// with PASS/FAIL per target and writes reports/bench.json: figures, not a gate, so a FAIL still exits 0;
// a run that could not measure (no model, a failed request) exits 1.
//
// This file starts the server and orders the steps; each step returns its figures:
//   settings.ts       duration, concurrency, model, workers (from the environment)
//   conversations.ts  the deterministic benign conversations
//   http.ts, cpu.ts   the HTTPS client and load generator; CPU time and peak RSS from /proc
//   server-load.ts    /predict at full load and paced, /batch_predict, 500,000-character chats with /health
//   in-process.ts     the same through createScorer, and HTTP's overhead over it
//   jobs.ts           v2 jobs through Redis, one and two instances
//   memory-fairness.ts  8 maximum-size batches at once, on a server of its own
//   report.ts         the table and reports/bench.json
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createScorer } from '../../src/scoring/scorer.ts';
import { benchConversations, conversation } from './conversations.ts';
import { peakRssMb } from './cpu.ts';
import { KEY, agent, call, freePort } from './http.ts';
import { httpOverheads, inProcess } from './in-process.ts';
import { jobsThroughRedis } from './jobs.ts';
import { describeMachine, machineLine } from './machine.ts';
import { memoryAndFairness, memoryFigures } from './memory-fairness.ts';
import { printTable, writeBenchJson } from './report.ts';
import { batchLoad, fullLoad, hugeWithHealth, pacedComparison, predictLoad, warmUp } from './server-load.ts';
import { MODEL_DIR, ROOT, WORKERS, type Figures } from './settings.ts';

/** The real server on `port`, with `extraEnv` over the bench's environment; resolves once it answers healthy. */
async function startServer(port: number, extraEnv: Record<string, string> = {}): Promise<ChildProcess> {
  // Started as `npm start` and the image start it: same V8 flags, same malloc arena bound.
  const child = spawn(process.execPath, ['--max-semi-space-size=2', '--heap-growing-percent=20', 'src/main.ts'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      MALLOC_ARENA_MAX: '2',
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      HTTP_PORT: '0',
      METRICS_PORT: '0',
      TLS_MODE: 'on',
      API_KEYS: KEY,
      RATE_LIMIT_MAX: '100000000',
      MODEL_DIR,
      WORKERS: String(WORKERS),
      ...extraEnv,
    },
  });
  const base = `https://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      const r = await call(base, 'GET', '/health');
      if (r.body.includes('healthy')) return child;
      if (r.body.includes('degraded')) throw new Error(`model at ${MODEL_DIR} did not load (server is degraded)`);
    } catch (err) {
      if (err instanceof Error && err.message.includes('degraded')) throw err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('server did not become healthy');
}

/** Memory and fairness under 8 maximum-size batches at once (memory-fairness.ts), on a server of its own. */
async function memoryRun(): Promise<Figures> {
  const memoryPort = await freePort();
  const memory = await memoryAndFairness({
    root: ROOT,
    start: async (keys) => ({ child: await startServer(memoryPort, { API_KEYS: keys.join(',') }), base: `https://127.0.0.1:${memoryPort}` }),
    smallConversation: conversation(40, 2500, 1),
    largeConversation: conversation(3000, 315_000, 9),
  });
  return memoryFigures(memory);
}

/** Every file the manifest names, and the manifest itself, in MB. */
function modelPackageMb(): number {
  const manifestFiles = Object.keys((JSON.parse(readFileSync(join(MODEL_DIR, 'manifest.json'), 'utf8')) as { files: Record<string, unknown> }).files);
  return [...manifestFiles, 'manifest.json'].reduce((s, name) => s + statSync(join(MODEL_DIR, name)).size, 0) / 1e6;
}

async function main(): Promise<void> {
  if (!existsSync(join(MODEL_DIR, 'manifest.json'))) {
    console.error(`bench: no model at ${MODEL_DIR} (set MODEL_DIR); nothing to measure`);
    process.exitCode = 1;
    return;
  }
  const { singles, batch, huge, hugeFlat } = benchConversations();
  let nextSingle = 0;
  const single = () => singles[nextSingle++ % singles.length] as string;
  const port = await freePort();
  const base = `https://127.0.0.1:${port}`;
  const machine = describeMachine();
  console.log(`bench: model ${MODEL_DIR}, ${WORKERS} workers, server ${base}, machine ${machineLine(machine)}`);
  // The in-process engine is loaded beside the server so that the paced comparison below alternates
  // between the two within a minute; its workers sit idle (no CPU) while the server is measured.
  const scorer = await createScorer({ modelDir: MODEL_DIR, workers: WORKERS, intraOpThreads: 1, maxQueue: 64, timeoutMs: 30_000 });
  const scoreOne = () => scorer.score([{ conversation: single() }]);
  const server = await startServer(port);
  const results: Figures = {};
  let serverDone = false;
  try {
    const load = predictLoad(base, singles);
    await warmUp(load, scoreOne);
    Object.assign(results, await fullLoad(load, server));
    Object.assign(results, await pacedComparison(load, server, scoreOne, results.single_rps ?? 0));
    Object.assign(results, await batchLoad(base, batch));
    Object.assign(results, await hugeWithHealth(base, huge, hugeFlat));
    results.peak_rss_mb = peakRssMb(server.pid);
    serverDone = true;
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    agent.destroy();
    if (!serverDone) await scorer.close();
  }

  try {
    Object.assign(results, await inProcess(scorer, scoreOne, singles, batch));
  } finally {
    await scorer.close();
  }
  Object.assign(results, httpOverheads(results));
  Object.assign(results, await jobsThroughRedis(startServer));
  Object.assign(results, await memoryRun());
  results.model_package_mb = modelPackageMb();

  printTable(results);
  if ((results.single_failed ?? 0) + (results.batch_failed ?? 0) > 0) {
    console.log(`\nfailed requests (non-2xx, connection errors and timeouts): single ${results.single_failed}, batch ${results.batch_failed}`);
    process.exitCode = 1;
  }
  writeBenchJson(results, machine);
}

main().catch((err: unknown) => {
  console.error('bench failed:', err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
