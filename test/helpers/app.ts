// Shared test helpers: the real app with the real scorer running the contract fixture model.
// Generic on purpose: any suite (v1, v2, ops) can build an app with its own settings and keys.
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildApp, scorerOptions, type TlsMaterial } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { parseKeyEntries } from '../../src/http/auth.ts';
import { createLogger, type Logger } from '../../src/ops/logger.ts';
import { createMetrics, type Metrics } from '../../src/ops/metrics.ts';
import { createScorer, type EngineScorer } from '../../src/scoring/scorer.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const FIXTURE_MODEL_DIR = fileURLToPath(new URL('../fixtures/contract-model', import.meta.url));
export const TEST_KEY = 'test-key-0123456789abcdef';
export const OTHER_KEY = 'other-key-fedcba9876543210';

/** A validated Config for tests: fixture model, one worker, loopback, plus `env` overrides. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    HTTP_PORT: '0',
    METRICS_PORT: '0',
    MODEL_DIR: FIXTURE_MODEL_DIR,
    WORKERS: '1',
    LOG_LEVEL: 'silent',
    ...env,
  });
}

/** Collects every JSON log line written through the returned logger. */
export function captureLogs(level = 'trace'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(line);
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}

export interface TestApp {
  app: FastifyInstance;
  scorer: EngineScorer;
  metrics: Metrics;
  config: Config;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Key entries as API_KEYS would hold them; default TEST_KEY and OTHER_KEY. */
  keys?: string[];
  logger?: Logger;
  tls?: TlsMaterial;
  /** Reuse a scorer across apps of one suite (it is not closed by close()). */
  scorer?: EngineScorer;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = testConfig(options.env);
  const metrics = createMetrics();
  const ownScorer = options.scorer === undefined;
  const scorer = options.scorer ?? (await createScorer(scorerOptions(config, metrics, options.logger)));
  metrics.observeScorer(scorer);
  const app = await buildApp({
    config,
    scorer,
    keys: parseKeyEntries(options.keys ?? [TEST_KEY, OTHER_KEY]),
    metrics,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.tls ? { tls: options.tls } : {}),
  });
  await app.ready();
  return {
    app,
    scorer,
    metrics,
    config,
    async close() {
      await app.close();
      if (ownScorer) await scorer.close();
    },
  };
}

export const bearer = (key: string = TEST_KEY) => ({ authorization: `Bearer ${key}` });

/** A benign two-speaker chat of `turns` lines, deterministic. */
export function chat(turns: number, seed = 0): string {
  const lines = [
    'did you watch the game last night',
    'yeah the second half was wild',
    'i am making pasta for dinner',
    'nice, with the tomato sauce from last week?',
    'my sister starts college next month',
    'tell her good luck from me',
    'the bus was late again this morning',
    'we should plan the hiking trip soon',
  ];
  const out: string[] = [];
  for (let i = 0; i < turns; i++) out.push(`user${(i % 2) + 1}: ${lines[(i + seed) % lines.length]}`);
  return out.join('\n');
}

/** A TCP port free right now on 127.0.0.1, for settings where 0 means "disabled", not "any". */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
