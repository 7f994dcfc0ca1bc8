// CPU accounting and load loops. Throughput on a shared 2-core machine moves with the neighbours; CPU
// time per request does much less, and it says where the HTTP overhead goes: the server's main thread
// (TLS, HTTP, fastify, logging, dispatch), its worker threads and V8's helpers, and the load
// generator, which shares the cores. Read from /proc (Linux).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

export interface ThreadCpu {
  /** CPU time of the process's main thread, in microseconds. */
  mainUs: number;
  /** CPU time of all its threads (workers, V8 and libuv helpers, onnxruntime), in microseconds. */
  totalUs: number;
}

/** Cumulative CPU time of a process's threads from /proc (Linux); zeros where /proc is absent. */
export function threadCpu(pid: number): ThreadCpu {
  let mainUs = 0;
  let totalUs = 0;
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return { mainUs, totalUs };
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const us = ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK;
      totalUs += us;
      if (tid === String(pid)) mainUs = us;
    } catch {
      // A thread that ended between listing and reading has no time left to count.
    }
  }
  return { mainUs, totalUs };
}

export const cpuSince = (pid: number, before: ThreadCpu): ThreadCpu => {
  const now = threadCpu(pid);
  return { mainUs: now.mainUs - before.mainUs, totalUs: now.totalUs - before.totalUs };
};

/** VmHWM: the process's peak resident set, worker threads included; in MB of 10^6 bytes, as the targets are stated. */
export function peakRssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return (Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) * 1024) / 1e6;
}

/** Runs `call` back to back in `concurrency` loops for `seconds`: completed calls, seconds taken. */
export async function callsFor(seconds: number, concurrency: number, call: () => Promise<unknown>): Promise<{ calls: number; seconds: number }> {
  let calls = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await call();
        calls++;
      }
    }),
  );
  return { calls, seconds: (performance.now() - started) / 1000 };
}

/**
 * Starts `call` at `rate` per second for `seconds`, at most `concurrency` in flight: the same offered
 * load autocannon's `overallRate` puts on the server, so both sides are compared at one request rate.
 */
export async function pacedCallsFor(rate: number, seconds: number, concurrency: number, call: () => Promise<unknown>): Promise<number> {
  let calls = 0;
  let next = performance.now();
  const end = next + seconds * 1000;
  const interval = 1000 / rate;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const at = next;
        if (at >= end) return;
        next += interval;
        const wait = at - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        await call();
        calls++;
      }
    }),
  );
  return calls;
}

export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};
