// Issue 33, item 1, under a real memory limit: the shipped image run with `--memory 1g --memory-swap 1g
// --cpus 2` (compose's and the chart's limits, and no swap to hide behind), hardened as compose runs it, then 8
// maximum-size /batch_predict calls at once from 4 API keys (100 conversations of 315,000 characters,
// about 32 MB each). Memory is bounded by admission (MAX_INFLIGHT_BODY_BYTES, default 64 MiB): a batch
// beyond the budget gets 503 with Retry-After before its body is read. Checked: the kernel killed
// nothing (State.OOMKilled, the cgroup's oom_kill count, the same node process still PID 1 and
// serving), every batch was answered 200 or the admission 503 with Retry-After (no reset, no other
// 5xx), at least one was scored, /health answered meanwhile, and the container's peak memory (the
// cgroup's high-water mark, page cache included) and node's peak RSS (VmHWM) both stay < 900 MB.
//
// The batches are sent by curl subprocesses from one file on disk, so this process never holds 8
// copies. Needs the engine's CLI (podman, or CONTAINER_CLI) able to run containers with a memory limit
// (scripts/container/setup-podman.sh in a sandbox) and curl; skipped with a message where either is missing.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ENGINE_ENV, FIXTURE_MODEL, IMAGE, buildAppImage, hasCommand, request, run, shippedModel } from '../helpers/container-image.ts';

const LIMIT_BYTES = 1024 ** 3;
/** The issue's target, in MB of 10^6 bytes (the README's unit): stricter than 900 MiB. */
const PEAK_TARGET_BYTES = 900e6;
const KEYS = ['memory-test-key-1-8c1e', 'memory-test-key-2-4f7a', 'memory-test-key-3-d20b', 'memory-test-key-4-91c3'];
const BATCHES = 8;
const ITEMS = 100;
const CONVERSATION_CHARS = 315_000;
/** The service's default BODY_LIMIT_BYTES: a maximum-size batch is just under it. */
const BODY_LIMIT_BYTES = 32 * 1024 * 1024;
/** Admission's two refusals: the budget is full, or this key already holds its share of it (two batches a key). */
const ADMISSION_REFUSALS = [
  { detail: 'Too many large requests in flight; retry later', code: 'body_budget_full' },
  { detail: "This API key's requests in flight already hold its share of the body budget; retry later", code: 'key_body_budget_full' },
];
/** The liveness probe's timeout in the chart: a /health slower than this would get the pod restarted. */
const HEALTH_TIMEOUT_MS = 3000;

const skipReason = !hasCommand(CLI) ? `${CLI} is not installed` : !hasCommand('curl') ? 'curl is not installed' : undefined;
if (skipReason !== undefined) console.warn(`[container-memory] suite skipped: ${skipReason}`);

const WORDS = [
  'hey', 'how', 'was', 'your', 'weekend', 'we', 'went', 'hiking', 'by', 'the', 'lake', 'did', 'you', 'finish',
  'report', 'for', 'monday', 'numbers', 'in', 'last', 'table', 'match', 'tonight', 'brother', 'pizza', 'recipe',
  'lentil', 'soup', 'too', 'salty', 'cat', 'knocked', 'plant', 'off', 'shelf', 'train', 'late', 'again',
  'café', 'crêpes', 'naïve', 'übung', 'friday', 'school', 'homework', 'thanks', 'tomorrow', 'morning',
];
const LINE_CHARS = 99;

/**
 * A two-party chat of exactly CONVERSATION_CHARS characters: lines of LINE_CHARS characters (speaker
 * prefix included), words drawn from a generator seeded with `seed`, so every item of a batch differs.
 */
function largeConversation(seed: number): string {
  let s = (seed * 2654435761) >>> 0;
  const pick = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return WORDS[(s >>> 8) % WORDS.length] as string;
  };
  const lines: string[] = [];
  const count = Math.ceil(CONVERSATION_CHARS / (LINE_CHARS + 1));
  for (let i = 0; i < count; i++) {
    // The last line takes up what is left (the lines before it end in a newline).
    const length = i === count - 1 ? CONVERSATION_CHARS - (count - 1) * (LINE_CHARS + 1) : LINE_CHARS;
    let line = `user${(i % 2) + 1}:`;
    while (line.length < length) line += ` ${pick()}`;
    lines.push(line.slice(0, length));
  }
  return lines.join('\n');
}

/** Writes the batch body to `file` one conversation at a time; returns its size in bytes. */
function writeBatchFile(file: string): number {
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, '{"conversations":[');
    for (let i = 0; i < ITEMS; i++) writeSync(fd, `${i === 0 ? '' : ','}${JSON.stringify(largeConversation(i + 1))}`);
    writeSync(fd, ']}');
  } finally {
    closeSync(fd);
  }
  return statSync(file).size;
}

interface BatchAnswer {
  key: string;
  /** curl's exit code: 0, or e.g. 55/56 for a connection reset. */
  exit: number;
  error: string;
  status: number;
  seconds: number;
  retryAfter: string | undefined;
  body: string;
}

/** One POST of the batch file with curl; the answer's headers and body go to files under `dir`. */
async function postBatch(dir: string, port: number, file: string, key: string, n: number): Promise<BatchAnswer> {
  const headers = path.join(dir, `headers-${n}.txt`);
  const body = path.join(dir, `body-${n}.json`);
  const args = [
    '-sS', '-k', '--max-time', '300',
    '-H', `Authorization: Bearer ${key}`,
    '-H', 'Content-Type: application/json',
    '--data-binary', `@${file}`,
    '-D', headers, '-o', body,
    '-w', '%{http_code} %{time_total}',
    `https://127.0.0.1:${port}/batch_predict`,
  ];
  const outcome = await run('curl', args, { maxBuffer: 1024 * 1024 }).then(
    (r) => ({ exit: 0, stdout: r.stdout, stderr: r.stderr }),
    (err: { code?: number; stdout?: string; stderr?: string }) => ({ exit: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' }),
  );
  const [code, seconds] = outcome.stdout.trim().split(' ');
  const read = (f: string) => {
    try {
      return readFileSync(f, 'utf8');
    } catch {
      return '';
    }
  };
  // The last header block is the final answer (a `100 Continue` may come first).
  const finalHeaders = read(headers).trim().split(/\r?\n\r?\n/).pop() ?? '';
  return {
    key,
    exit: outcome.exit,
    error: outcome.stderr.trim(),
    status: Number(code ?? 0),
    seconds: Number(seconds ?? Number.NaN),
    retryAfter: /^retry-after:\s*(\S+)/im.exec(finalHeaders)?.[1],
    body: read(body),
  };
}

/** `cat` inside the container; undefined when the file is not there. */
async function catInside(name: string, file: string): Promise<string | undefined> {
  return run(CLI, ['exec', name, 'cat', file], { env: ENGINE_ENV }).then(
    (r) => r.stdout,
    () => undefined,
  );
}

interface CgroupMemory {
  version: 1 | 2;
  limit: number;
  /** Swap allowed on top of the memory limit; undefined where the kernel does not account swap. */
  swap: number | undefined;
  peak: number;
  oomKills: number;
}

/** The container's own memory cgroup, read from inside it: cgroup v2 files, else v1's. */
async function cgroupMemory(name: string): Promise<CgroupMemory> {
  const num = (s: string | undefined) => (s === undefined ? Number.NaN : s.trim() === 'max' ? Infinity : Number(s.trim()));
  const v2 = await catInside(name, '/sys/fs/cgroup/memory.max');
  if (v2 !== undefined) {
    const events = (await catInside(name, '/sys/fs/cgroup/memory.events')) ?? '';
    return {
      version: 2,
      limit: num(v2),
      swap: num(await catInside(name, '/sys/fs/cgroup/memory.swap.max')),
      peak: num(await catInside(name, '/sys/fs/cgroup/memory.peak')),
      oomKills: Number(/^oom_kill (\d+)$/m.exec(events)?.[1] ?? Number.NaN),
    };
  }
  const v1 = '/sys/fs/cgroup/memory';
  const limit = num(await catInside(name, `${v1}/memory.limit_in_bytes`));
  const memsw = await catInside(name, `${v1}/memory.memsw.limit_in_bytes`);
  const oomControl = (await catInside(name, `${v1}/memory.oom_control`)) ?? '';
  return {
    version: 1,
    limit,
    swap: memsw === undefined ? undefined : num(memsw) - limit,
    peak: num(await catInside(name, `${v1}/memory.max_usage_in_bytes`)),
    // Kernels before 4.13 have no oom_kill line: NaN, which the check below reports.
    oomKills: Number(/^oom_kill (\d+)$/m.exec(oomControl)?.[1] ?? Number.NaN),
  };
}

interface EngineState {
  Running: boolean;
  OOMKilled: boolean;
  Pid: number;
  ExitCode: number;
  StartedAt: string;
}

async function state(name: string): Promise<EngineState> {
  const { stdout } = await run(CLI, ['inspect', '--format', '{{json .State}}', name], { env: ENGINE_ENV });
  return JSON.parse(stdout) as EngineState;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? Number.NaN;

describe.skipIf(skipReason !== undefined)('container under a 1 GiB memory limit', () => {
  const name = `cr-memory-${process.pid}-${Date.now()}`;
  let dir = '';
  let batchFile = '';
  let httpsPort = 0;
  let metricsPort = 0;
  let started = false;

  const logsTail = async () =>
    run(CLI, ['logs', '--tail', '40', name], { env: ENGINE_ENV, maxBuffer: 16 * 1024 * 1024 }).then(
      (r) => `${r.stdout}${r.stderr}`,
      (err: unknown) => `(no logs: ${String(err)})`,
    );

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cr-memory-'));
    batchFile = path.join(dir, 'batch.json');
    const bytes = writeBatchFile(batchFile);
    // A maximum-size batch: as large as the body limit lets 100 such conversations be.
    expect(bytes).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
    expect(bytes).toBeGreaterThan(31e6);

    const built = await buildAppImage();
    console.info(`[container-memory] ${built}; batch body ${mb(bytes)}`);

    const model = shippedModel ? [] : ['-v', `${FIXTURE_MODEL}:/opt/model:ro`, '-e', 'MODEL_DIR=/opt/model'];
    await run(
      CLI,
      [
        'run', '-d', '--name', name,
        '--memory', '1g', '--memory-swap', '1g', '--cpus', '2',
        // As compose runs it: read-only root, tmpfs /tmp, no capabilities, no-new-privileges.
        '--read-only', '--tmpfs', '/tmp:rw,noexec,nosuid,size=64m',
        '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
        '-p', '127.0.0.1::8443', '-p', '127.0.0.1::9464',
        '-e', `API_KEYS=${KEYS.join(',')}`,
        // The chart's and compose's worker count; MAX_INFLIGHT_BODY_BYTES and BODY_LIMIT_BYTES stay at their defaults.
        '-e', 'WORKERS=2',
        // Memory is what is checked here, not speed: a slow machine must not turn a scored batch into
        // the scoring timeout's 503.
        '-e', 'REQUEST_TIMEOUT_MS=120000',
        ...model,
        IMAGE,
      ],
      { env: ENGINE_ENV },
    );
    started = true;
    const port = async (p: number) => {
      const { stdout } = await run(CLI, ['port', name, `${p}/tcp`], { env: ENGINE_ENV });
      return Number(/:(\d+)\s*$/m.exec(stdout)?.[1]);
    };
    httpsPort = await port(8443);
    metricsPort = await port(9464);

    const deadline = Date.now() + 120_000;
    for (;;) {
      const ready = await request(httpsPort, '/readyz', { timeoutMs: 2000 }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline || !(await state(name)).Running) {
        throw new Error(`the container did not become ready; its log:\n${await logsTail()}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }, 900_000);

  afterAll(async () => {
    if (started) await run(CLI, ['rm', '-f', '-t', '0', name], { env: ENGINE_ENV }).catch(() => undefined);
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('runs under the limit it was given: 1 GiB, no swap', async () => {
    const cg = await cgroupMemory(name);
    expect(cg.limit, `memory limit the container sees (cgroup v${cg.version})`).toBe(LIMIT_BYTES);
    // v2: memory.swap.max 0; v1: memsw limit equal to the memory limit (where the kernel accounts swap).
    if (cg.swap !== undefined) expect(cg.swap).toBe(0);
    // node is PID 1 (the image's CMD), so /proc/1/status below is the service's own.
    const cmdline = (await catInside(name, '/proc/1/cmdline')) ?? '';
    expect(cmdline.split('\0')).toContain('src/main.ts');
  });

  it(`answers ${BATCHES} concurrent maximum-size batches from ${KEYS.length} keys without being killed, peak memory < 900 MB`, async () => {
    const before = await state(name);
    expect(before.Running).toBe(true);

    // /health back to back while the batches run, each with the liveness probe's timeout.
    let done = false;
    const health: Array<{ ms: number; status: number; body: string }> = [];
    const polling = (async () => {
      while (!done) {
        const t0 = performance.now();
        const r = await request(httpsPort, '/health', { timeoutMs: HEALTH_TIMEOUT_MS }).then(
          (x) => ({ status: x.status, body: x.body }),
          (err: unknown) => ({ status: 0, body: String(err) }),
        );
        health.push({ ms: performance.now() - t0, ...r });
      }
    })();
    const t0 = Date.now();
    const answers = await Promise.all(
      Array.from({ length: BATCHES }, (_, i) => postBatch(dir, httpsPort, batchFile, KEYS[i % KEYS.length] as string, i)),
    );
    const wallS = (Date.now() - t0) / 1000;
    done = true;
    await polling;

    const after = await state(name);
    const cg = await cgroupMemory(name);
    const status = (await catInside(name, '/proc/1/status')) ?? '';
    const vmHwm = Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1] ?? Number.NaN) * 1024;
    const healthMs = health.map((h) => h.ms);
    console.info(
      `[container-memory] ${BATCHES} batches in ${wallS.toFixed(1)} s: ` +
        answers.map((a) => `${a.key.slice(-6)} ${a.status}${a.exit === 0 ? '' : ` curl exit ${a.exit}`} ${a.seconds.toFixed(1)} s`).join(', ') +
        `; cgroup v${cg.version} peak ${mb(cg.peak)} (limit ${mb(cg.limit)}), node VmHWM ${mb(vmHwm)}, oom_kill ${cg.oomKills}; ` +
        `/health ${health.length} calls, p50 ${percentile(healthMs, 50).toFixed(1)} ms, p99 ${percentile(healthMs, 99).toFixed(1)} ms, ` +
        `max ${Math.max(...healthMs).toFixed(1)} ms`,
    );

    // Not killed: still running, the same process, no OOM kill in its cgroup.
    const alive = `container state ${JSON.stringify(after)}; log:\n${after.Running ? '' : await logsTail()}`;
    expect(after.OOMKilled, alive).toBe(false);
    expect(after.Running, alive).toBe(true);
    expect(after.Pid).toBe(before.Pid);
    expect(after.StartedAt).toBe(before.StartedAt);
    expect(cg.oomKills, 'OOM kills in the container cgroup').toBe(0);

    // Every batch answered: 200 with 100 predictions, or admission's 503 with Retry-After. No reset.
    for (const a of answers) {
      const what = `batch from ${a.key}: curl exit ${a.exit} ${a.error}, HTTP ${a.status}, ${a.body.slice(0, 200)}`;
      expect(a.exit, what).toBe(0);
      expect([200, 503], what).toContain(a.status);
      if (a.status === 200) {
        expect((JSON.parse(a.body) as { predictions: unknown[] }).predictions, what).toHaveLength(ITEMS);
      } else {
        expect(ADMISSION_REFUSALS, what).toContainEqual(JSON.parse(a.body));
        expect(a.retryAfter, what).toMatch(/^[1-9]\d*$/);
      }
    }
    expect(answers.filter((a) => a.status === 200).length, 'batches scored').toBeGreaterThanOrEqual(1);

    // /health answered every time, within the liveness probe's timeout.
    expect(health.length).toBeGreaterThan(0);
    for (const h of health) expect(h, 'a /health call during the batches').toMatchObject({ status: 200 });
    expect(health.every((h) => (JSON.parse(h.body) as { status: string }).status === 'healthy')).toBe(true);

    // Peak memory: the cgroup's high-water mark (everything the container was charged, page cache
    // included) and the service process's peak RSS (its worker threads included).
    expect(cg.peak, 'cgroup peak memory').toBeLessThan(PEAK_TARGET_BYTES);
    expect(vmHwm, 'node VmHWM').toBeLessThan(PEAK_TARGET_BYTES);

    // Still serving afterwards, with the whole budget given back.
    const small = await request(httpsPort, '/predict', { key: KEYS[0], body: { conversation: 'user1: hi\nuser2: hello, how was school' } });
    expect(small.status, small.body).toBe(200);
    const metrics = await request(metricsPort, '/metrics', { tls: false });
    expect(metrics.body).toMatch(/^conversation_risk_inflight_body_bytes 0$/m);
  }, 420_000);
});
