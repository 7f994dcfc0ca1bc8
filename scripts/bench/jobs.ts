// v2 jobs through Redis: the same job of JOB_CONVERSATIONS 40-turn chats with one server instance,
// then with two sharing the queue, on a redis-server of the bench's own (skipped where none is installed).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { conversation } from './conversations.ts';
import { call, freePort } from './http.ts';
import { ROOT, type Figures } from './settings.ts';

export const JOB_CONVERSATIONS = 400;

/** Starts the real server on `port` with extra environment; resolves with it once healthy (run.ts's startServer). */
export type StartServer = (port: number, extraEnv: Record<string, string>) => Promise<ChildProcess>;

/** A redis-server of its own on a free port, or undefined where none is installed. */
async function startRedisServer(dir: string): Promise<{ url: string; stop: () => void } | undefined> {
  const port = await freePort();
  let child: ChildProcess;
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  await new Promise((r) => setTimeout(r, 300));
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill('SIGKILL') };
}

/** Conversations per second of one job of JOB_CONVERSATIONS 40-turn chats, submitted to the first of `instances`. */
async function jobThroughput(start: StartServer, instances: number, redisUrl: string, keyFile: string, prefix: string): Promise<number> {
  const ports = await Promise.all(Array.from({ length: instances }, () => freePort()));
  const env = { REDIS_URL: redisUrl, REDIS_ENCRYPTION_KEY_FILE: keyFile, REDIS_KEY_PREFIX: prefix, JOB_MAX_ITEMS: String(JOB_CONVERSATIONS) };
  const servers = await Promise.all(ports.map((p) => start(p, env)));
  try {
    const base = `https://127.0.0.1:${ports[0]}`;
    const messages = (seed: number) =>
      conversation(40, 2500, seed)
        .split('\n')
        .map((line, i) => ({ user: i % 2 === 0 ? 'user1' : 'user2', text: line.replace(/^user[12]: /, '') }));
    const body = JSON.stringify({ mode: 'batch', conversations: Array.from({ length: JOB_CONVERSATIONS }, (_, i) => ({ id: `c${i}`, messages: messages(1000 + i) })) });
    const t0 = performance.now();
    const submitted = await call(base, 'POST', '/v2/predict/batch', body);
    if (submitted.status !== 202) throw new Error(`job submission answered ${submitted.status}: ${submitted.body}`);
    const poll = (JSON.parse(submitted.body) as { poll_url: string }).poll_url;
    for (;;) {
      const job = JSON.parse((await call(base, 'GET', poll)).body) as { status: string };
      if (job.status === 'done') break;
      if (job.status === 'failed') throw new Error('bench job failed');
      await new Promise((r) => setTimeout(r, 20));
    }
    return JOB_CONVERSATIONS / ((performance.now() - t0) / 1000);
  } finally {
    for (const s of servers) s.kill('SIGTERM');
    await Promise.all(servers.map((s) => new Promise((r) => s.once('exit', r))));
  }
}

/** The same job with one instance, then with two sharing the queue; no figures without a redis-server. */
export async function jobsThroughRedis(start: StartServer): Promise<Figures> {
  const jobDir = join(ROOT, '.tmp/bench-redis');
  mkdirSync(jobDir, { recursive: true });
  const keyFile = join(jobDir, 'encryption.key');
  writeFileSync(keyFile, `${Buffer.alloc(32, 1).toString('base64')}\n`);
  const redisServer = await startRedisServer(jobDir);
  if (redisServer === undefined) {
    console.log('bench: no redis-server here; job throughput skipped');
    return {};
  }
  try {
    return {
      jobs_one_instance_per_s: await jobThroughput(start, 1, redisServer.url, keyFile, 'bench-1'),
      jobs_two_instances_per_s: await jobThroughput(start, 2, redisServer.url, keyFile, 'bench-2'),
    };
  } finally {
    redisServer.stop();
  }
}
