// The memory and fairness run (issue 33, items 1 and 2): 8 maximum-size /batch_predict calls at once
// from 4 keys (100 conversations of 315,000 characters each, a 32 MB body), sent by curl so the uploads
// run outside this process, while a fifth key's client (fairness-probe.ts, a process of its own) polls
// /health back to back and sends 40-turn /predict calls. Reports what each batch was answered, the
// server's peak RSS and both latencies.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { peakRssMb } from './cpu.ts';
import type { ProbeLatencies } from './fairness-probe.ts';
import type { Figures } from './settings.ts';

export interface MemoryFairnessFigures {
  /** Answers to the 8 batches, e.g. 200 or 503 (admission), in order of sending. */
  batch_statuses: number[];
  peak_rss_mb: number;
  health_p99_ms: number;
  health_max_ms: number;
  /** /health calls meanwhile with no 200 answer. */
  health_failed: number;
  other_key_predict_p50_ms: number;
  other_key_predict_p99_ms: number;
  other_key_predict_failed: number;
  alive: boolean;
}

export interface MemoryFairnessOptions {
  root: string;
  /** Starts the real server with these keys; resolves with it once healthy. */
  start(keys: string[]): Promise<{ child: ChildProcess; base: string }>;
  /** A 40-turn conversation of about 2,500 characters. */
  smallConversation: string;
  /** A conversation of about 315,000 characters. */
  largeConversation: string;
}

const BATCHES = 8;
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

function curlPost(url: string, key: string, file: string): Promise<number> {
  return new Promise((resolve) => {
    const c = spawn('curl', ['-sk', '-o', '/dev/null', '-w', '%{http_code}', '-H', `Authorization: Bearer ${key}`, '-H', 'Content-Type: application/json', '--data-binary', `@${file}`, url]);
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.on('exit', () => resolve(Number(out)));
  });
}

/** The server's peak RSS, or NaN once it is gone (killed: the figure it died at is not readable). */
function peakRssOrNaN(pid: number | undefined): number {
  try {
    return peakRssMb(pid);
  } catch {
    return Number.NaN;
  }
}

/** How long the probe may take to start, and to report once told to stop. */
const PROBE_WAIT_MS = 30_000;

/** The other key's client (fairness-probe.ts), polling and predicting from its own process once ready. */
async function startProbe(base: string, key: string, conversation: string): Promise<{ stop(): Promise<ProbeLatencies>; kill(): void }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./fairness-probe.ts', import.meta.url)), base, key], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  // A probe that died must not take the bench down with an unhandled EPIPE on its stdin.
  child.stdin.on('error', () => {});
  // 'close', not 'exit': the process can exit before its last stdout chunk has been read here.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const ready = new Promise<boolean>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.startsWith('ready\n')) resolve(true);
    });
    void closed.then(() => resolve(false));
  });
  const within = <T>(what: string, p: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`fairness probe: no ${what} within ${PROBE_WAIT_MS} ms`)), PROBE_WAIT_MS);
    });
    return Promise.race([p, late]).finally(() => clearTimeout(timer));
  };
  child.stdin.write(`${JSON.stringify(conversation)}\n`);
  if (!(await within('"ready"', ready))) throw new Error(`fairness probe exited before it was ready (${child.exitCode ?? child.signalCode})`);
  return {
    async stop() {
      child.stdin.end('stop\n');
      await within('report', closed);
      if (child.exitCode !== 0) throw new Error(`fairness probe failed (exit ${child.exitCode ?? child.signalCode})`);
      return JSON.parse(out.slice('ready\n'.length)) as ProbeLatencies;
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

export async function memoryAndFairness(o: MemoryFairnessOptions): Promise<MemoryFairnessFigures> {
  const batchKeys = ['bench-batch-key-1', 'bench-batch-key-2', 'bench-batch-key-3', 'bench-batch-key-4'];
  const otherKey = 'bench-other-key-5';
  const dir = join(o.root, '.tmp/bench-memory');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'batch.json');
  writeFileSync(file, JSON.stringify({ conversations: Array.from({ length: 100 }, () => o.largeConversation) }));
  const { child, base } = await o.start([...batchKeys, otherKey]);
  let probe: Awaited<ReturnType<typeof startProbe>> | undefined;
  try {
    probe = await startProbe(base, otherKey, o.smallConversation);
    const statuses = await Promise.all(Array.from({ length: BATCHES }, (_, i) => curlPost(`${base}/batch_predict`, batchKeys[i % batchKeys.length] as string, file)));
    const { health, health_failed: healthFailed, predict: other, predict_failed: otherFailed } = await probe.stop();
    return {
      batch_statuses: statuses,
      peak_rss_mb: peakRssOrNaN(child.pid),
      health_p99_ms: percentile(health, 99),
      health_max_ms: Math.max(...health),
      health_failed: healthFailed,
      other_key_predict_p50_ms: percentile(other, 50),
      other_key_predict_p99_ms: percentile(other, 99),
      other_key_predict_failed: otherFailed,
      alive: child.exitCode === null && child.signalCode === null,
    };
  } finally {
    probe?.kill();
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

/** The run's figures for bench.json's `results`: memory_*, the answers counted by kind. */
export function memoryFigures(m: MemoryFairnessFigures): Figures {
  const ok = m.batch_statuses.filter((x) => x === 200).length;
  const refused = m.batch_statuses.filter((x) => x === 503).length;
  return {
    memory_peak_rss_mb: m.peak_rss_mb,
    memory_batches_ok: ok,
    memory_batches_refused: refused,
    memory_batches_other: m.batch_statuses.length - ok - refused,
    memory_health_p99_ms: m.health_p99_ms,
    memory_health_max_ms: m.health_max_ms,
    memory_health_failed: m.health_failed,
    memory_other_predict_p50_ms: m.other_key_predict_p50_ms,
    memory_other_predict_p99_ms: m.other_key_predict_p99_ms,
    memory_other_predict_failed: m.other_key_predict_failed,
    memory_alive: m.alive ? 1 : 0,
  };
}
