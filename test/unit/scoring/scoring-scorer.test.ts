import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { LARGE_TASKS_PER_WORKER, createScorer, chunkByCharacters, type EngineScorer } from '../../../src/scoring/scorer.ts';
import { packageWithSlowTokenizer } from '../../helpers/model-package.ts';
import { until } from '../../helpers/wait.ts';
import { ScoringError, type Prediction, type ScoreObservation, type ScoreRequest } from '../../../src/scoring/types.ts';

const FIXTURE = join(import.meta.dirname, '../../fixtures/contract-model');
const base = { workers: 2, intraOpThreads: 1, maxQueue: 16, timeoutMs: 20_000 };

function chat(turns: number, seed = 0): string {
  return Array.from({ length: turns }, (_, i) => `user${(i % 2) + 1}: message ${i + seed} about school games music and my friend`).join('\n');
}

/** About `chars` characters of chat. */
function longChat(chars: number): string {
  const line = 'user1: hello there, do you like music games and movies? tell me about your school day\n';
  return line.repeat(Math.ceil(chars / line.length)).slice(0, chars);
}

async function rejection(p: Promise<unknown>): Promise<ScoringError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ScoringError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('a scorer reports whether its workers tokenize through the fast path', () => {
  it('true for the contract model, undefined before it is loaded', async () => {
    const absent = await createScorer({ ...base, modelDir: join(FIXTURE, 'absent') });
    expect(absent.fastTokenizer).toBeUndefined();
    await absent.close();
    const scorer = await createScorer({ ...base, modelDir: FIXTURE });
    expect(scorer.fastTokenizer).toBe(true);
    await scorer.close();
  });

  it('false for a tokenizer.json it does not implement, which still loads and scores through the binding', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scorer-fast-'));
    const scorer = await createScorer({ ...base, modelDir: packageWithSlowTokenizer(FIXTURE, dir) });
    try {
      expect(scorer.ready).toBe(true);
      expect(scorer.fastTokenizer).toBe(false);
      const [p] = await scorer.score([{ conversation: 'user1: hi there, how are you?' }]);
      expect(p?.harmful_score).toBeGreaterThanOrEqual(0);
    } finally {
      await scorer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a scorer without a usable model stays up and answers model_unavailable', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'scorer-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('a missing model directory leaves ready=false and score rejects model_unavailable', async () => {
    const scorer = await createScorer({ ...base, modelDir: join(dir, 'absent') });
    expect(scorer.ready).toBe(false);
    expect(scorer.manifest).toBeUndefined();
    expect(scorer.loadError).toMatch(/manifest\.json/);
    expect((await rejection(scorer.score([{ conversation: 'user1: hi' }]))).kind).toBe('model_unavailable');
    await scorer.close();
  });

  it('a file that does not match its manifest hash leaves ready=false', async () => {
    const d = join(dir, 'tampered');
    cpSync(FIXTURE, d, { recursive: true });
    const model = readFileSync(join(d, 'model.onnx'));
    model.writeUInt8(model.readUInt8(model.length - 1) ^ 1, model.length - 1);
    writeFileSync(join(d, 'model.onnx'), model);
    const scorer = await createScorer({ ...base, modelDir: d });
    expect(scorer.ready).toBe(false);
    expect(scorer.loadError).toMatch(/SHA-256 mismatch for model\.onnx/);
    expect((await rejection(scorer.score([{ conversation: 'user1: hi' }]))).kind).toBe('model_unavailable');
    await scorer.close();
  });

  it('MODEL_SHA256 refuses a swapped package whose own manifest is consistent, and accepts the pinned one', async () => {
    // Another package, self-consistent (its manifest hashes its files), in place of the pinned one.
    const d = join(dir, 'swapped');
    cpSync(FIXTURE, d, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(d, 'manifest.json'), 'utf8'));
    manifest.version = '9.9.9-swapped';
    writeFileSync(join(d, 'manifest.json'), JSON.stringify(manifest));
    const pinned = createHash('sha256').update(readFileSync(join(FIXTURE, 'manifest.json'))).digest('hex');
    const swapped = await createScorer({ ...base, modelDir: d, workers: 1, manifestSha256: pinned });
    expect(swapped.ready).toBe(false);
    expect(swapped.loadError).toMatch(/MODEL_SHA256 pins/);
    await swapped.close();
    const genuine = await createScorer({ ...base, modelDir: FIXTURE, workers: 1, manifestSha256: pinned.toUpperCase() });
    expect(genuine.ready).toBe(true);
    await genuine.close();
  });

  it('a model.onnx that onnxruntime cannot load (hash correct) leaves ready=false', async () => {
    const d = join(dir, 'garbage');
    cpSync(FIXTURE, d, { recursive: true });
    const garbage = Buffer.from('this is not an onnx graph');
    writeFileSync(join(d, 'model.onnx'), garbage);
    const manifest = JSON.parse(readFileSync(join(d, 'manifest.json'), 'utf8'));
    manifest.files['model.onnx'] = { sha256: createHash('sha256').update(garbage).digest('hex'), bytes: garbage.length };
    writeFileSync(join(d, 'manifest.json'), JSON.stringify(manifest));
    const scorer = await createScorer({ ...base, modelDir: d, workers: 1 });
    expect(scorer.ready).toBe(false);
    expect(scorer.loadError).toBeTruthy();
    expect((await rejection(scorer.score([{ conversation: 'user1: hi' }]))).kind).toBe('model_unavailable');
    await scorer.close();
  });
});

describe('a scorer whose workers do not load the model in time is not ready', () => {
  it('reports the load timeout and rejects model_unavailable', async () => {
    const scorer = await createScorer({ ...base, modelDir: FIXTURE, workers: 1, loadTimeoutMs: 1 });
    expect(scorer.ready).toBe(false);
    expect(scorer.loadError).toMatch(/did not load the model within 1 ms/);
    expect((await rejection(scorer.score([{ conversation: 'user1: hi' }]))).kind).toBe('model_unavailable');
    await scorer.close();
  });
});

describe('scoring with the contract model through the worker pool', () => {
  let scorer: EngineScorer;
  const observations: ScoreObservation[] = [];
  beforeAll(async () => {
    scorer = await createScorer({ ...base, modelDir: FIXTURE, onObservation: (o) => observations.push(o) });
    expect(scorer.loadError).toBeUndefined();
  });
  afterAll(async () => {
    await scorer.close();
  });

  it('turns off onnxruntime telemetry in the process environment the native library reads', () => {
    expect(process.env.ORT_DISABLE_TELEMETRY).toBe('1');
  });

  it('is ready and exposes the manifest', () => {
    expect(scorer.ready).toBe(true);
    expect(scorer.manifest?.name).toBe('contract-fixture');
  });

  it('returns a complete prediction whose fields obey the rules', async () => {
    const [p] = await scorer.score([{ conversation: chat(40), age_a: '13', age_b: 'adult' }]);
    expect(p).toBeDefined();
    const u = p!.user_probabilities;
    expect(u.user1 + u.user2 + u.neither).toBeCloseTo(1, 9);
    expect(p!.harmful_score).toBeGreaterThanOrEqual(0);
    expect(p!.harmful_score).toBeLessThanOrEqual(1);
    expect(p!.is_harmful).toBe(p!.harmful_score > 0.5);
    expect(p!.confidence).toBeGreaterThanOrEqual(0);
    expect(p!.confidence).toBeLessThanOrEqual(1);
    expect(p!.num_segments).toBe(1);
    expect(p!.used_age_features).toBe(true);
    expect(p!.conversation_preview).toBe(Array.from(chat(40)).slice(0, 500).join(''));
  });

  it('names nobody for flat text and splits its harm evenly between the sides', async () => {
    const flat = chat(12).replace(/^user[12]: /gm, '');
    const [p] = await scorer.score([{ conversation: flat }]);
    expect(p!.predatory_user).toBe('neither');
    expect(p!.user_probabilities.user1).toBeCloseTo(p!.harmful_score / 2, 9);
    expect(p!.user_probabilities.user2).toBeCloseTo(p!.harmful_score / 2, 9);
    expect(p!.user_probabilities.neither).toBeCloseTo(1 - p!.harmful_score, 9);
  });

  it('gives the same prediction for a conversation alone and inside a batch (padding does not matter)', async () => {
    const target: ScoreRequest = { conversation: chat(3), age_b: '15' };
    const [alone] = await scorer.score([target]);
    const batch = await scorer.score([{ conversation: chat(200) }, target, { conversation: longChat(20_000) }]);
    expect(batch[1]!.harmful_score).toBeCloseTo(alone!.harmful_score, 4);
    expect(batch[1]!.user_probabilities.user1).toBeCloseTo(alone!.user_probabilities.user1, 4);
  });

  it('returns batch predictions in input order', async () => {
    const requests: ScoreRequest[] = Array.from({ length: 30 }, (_, i) => ({ conversation: i % 7 === 0 ? longChat(5_000 + i) : chat(1 + i, i) }));
    const singles: Prediction[][] = [];
    for (const r of requests) singles.push(await scorer.score([r]));
    const batch = await scorer.score(requests);
    expect(batch).toHaveLength(30);
    batch.forEach((p, i) => {
      expect(p.conversation_preview).toBe(Array.from(requests[i]!.conversation).slice(0, 500).join(''));
      expect(p.harmful_score).toBeCloseTo(singles[i]![0]!.harmful_score, 4);
    });
  });

  it('reports segments per conversation to the observer', async () => {
    observations.length = 0;
    await scorer.score([{ conversation: chat(2) }, { conversation: chat(200) }]);
    expect(observations).toHaveLength(1);
    expect(observations[0]!.segments).toEqual([1, 4]);
    expect(observations[0]!.inferenceSeconds).toBeGreaterThan(0);
  });

  it('scores 16 concurrent requests', async () => {
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => scorer.score([{ conversation: chat(40, i) }])));
    expect(results.every((r) => r.length === 1 && r[0]!.num_segments === 1)).toBe(true);
  });

  it('scores a 500,000-character conversation in several segments while the event loop stays responsive', async () => {
    const text = longChat(500_000);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const [p] = await scorer.score([{ conversation: text }]);
    delay.disable();
    expect(p!.num_segments).toBeGreaterThan(1);
    expect(Array.from(p!.conversation_preview)).toHaveLength(500);
    // Generous bound: tokenizing and running ONNX on the main thread would block it for far longer.
    expect(delay.max / 1e6).toBeLessThan(200);
  });
});

describe('queue bound and deadlines', () => {
  let scorer: EngineScorer;
  beforeAll(async () => {
    scorer = await createScorer({ ...base, modelDir: FIXTURE, workers: 1, tasksPerWorker: 1, maxQueue: 1, timeoutMs: 20_000 });
  });
  afterAll(async () => {
    await scorer.close();
  });

  it('rejects overloaded at once when the queue is full, and serves the accepted work', async () => {
    const busy = scorer.score([{ conversation: longChat(300_000) }]);
    const queued = scorer.score([{ conversation: chat(4) }]);
    const started = performance.now();
    const err = await rejection(scorer.score([{ conversation: chat(4) }]));
    expect(err.kind).toBe('overloaded');
    expect(performance.now() - started).toBeLessThan(100);
    expect((await busy)[0]!.num_segments).toBeGreaterThan(1);
    expect(await queued).toHaveLength(1);
  });

  it('withdraws queued work when its request is cancelled, without disturbing the running one', async () => {
    const busy = scorer.score([{ conversation: longChat(300_000) }]);
    const controller = new AbortController();
    const queued = scorer.score([{ conversation: chat(4) }], { signal: controller.signal });
    expect(scorer.queueSize).toBe(1);
    expect(scorer.inFlight).toBe(1);
    controller.abort();
    expect((await rejection(queued)).kind).toBe('timeout');
    expect(scorer.queueSize).toBe(0);
    expect((await busy)[0]!.num_segments).toBeGreaterThan(1);
  });
});

describe('closing the scorer', () => {
  it('answers model_unavailable for a call with tasks still to run and for later calls', async () => {
    const scorer = await createScorer({ ...base, modelDir: FIXTURE, workers: 1 });
    // Three tasks of 150,000 characters, run one after another: closing comes during the first.
    const batch = [0, 1, 2].map(() => ({ conversation: longChat(150_000) }));
    const pending = rejection(scorer.score(batch));
    await scorer.close();
    expect((await pending).kind).toBe('model_unavailable');
    expect(scorer.ready).toBe(false);
    expect((await rejection(scorer.score([{ conversation: 'user1: hi' }]))).kind).toBe('model_unavailable');
  });

  it('never stops a worker inside a task: the running task finishes and its call gets its prediction, queued work is refused', async () => {
    const scorer = await createScorer({ ...base, modelDir: FIXTURE, workers: 1, tasksPerWorker: 1 });
    // One task (under TASK_CHARS) of many ONNX runs, caught while the worker runs it.
    const running = scorer.score([{ conversation: longChat(150_000) }]);
    await until(async () => (scorer.inFlight === 1 ? true : undefined), 5_000, 1);
    const queued = rejection(scorer.score([{ conversation: chat(4) }]));
    expect(scorer.queueSize).toBe(1);
    const settled: string[] = [];
    const closing = scorer.close().then(() => settled.push('closed'));
    const [prediction] = await running.then((p) => (settled.push('scored'), p));
    expect(prediction!.num_segments).toBeGreaterThan(1);
    expect((await queued).kind).toBe('model_unavailable');
    await closing;
    // close() resolves only after the task it found running has answered.
    expect(settled).toEqual(['scored', 'closed']);
    expect(scorer.inFlight).toBe(0);
  });

  it('with two workers busy, waits for the one that finishes last, not the first', async () => {
    const scorer = await createScorer({ ...base, modelDir: FIXTURE, workers: 2, tasksPerWorker: 1 });
    // Small calls (under SMALL_CALL_CHARS) go straight to the pool, one task each, one per worker.
    const short = scorer.score([{ conversation: longChat(5_000) }]);
    const long = scorer.score([{ conversation: longChat(45_000) }]);
    await until(async () => (scorer.inFlight === 2 ? true : undefined), 5_000, 1);
    await scorer.close();
    expect((await short)[0]!.num_segments).toBeGreaterThanOrEqual(1);
    expect((await long)[0]!.num_segments).toBeGreaterThan((await short)[0]!.num_segments);
  });
});

describe('a scoring worker that stops', () => {
  // The pool's piscina, caught as it runs a task: its threads are the real worker threads.
  let run: MockInstance<Piscina['run']>;
  beforeEach(() => {
    run = vi.spyOn(Piscina.prototype, 'run');
  });
  afterEach(() => run.mockRestore());
  const workerThreads = () => (run.mock.contexts.at(-1) as Piscina).threads;

  it('fails the call it was running as interrupted (retryable), and its replacement scores the next call', async () => {
    const scorer = await createScorer({ ...base, modelDir: FIXTURE, workers: 1 });
    try {
      const pending = rejection(scorer.score([{ conversation: longChat(500_000) }]));
      await until(async () => (scorer.inFlight > 0 ? true : undefined), 15_000);
      await workerThreads()[0]?.terminate();
      const err = await pending;
      expect(err.kind).toBe('interrupted');
      expect(scorer.ready).toBe(true);
      const [p] = await scorer.score([{ conversation: chat(4) }]);
      expect(p?.harmful_score).toBeGreaterThanOrEqual(0);
    } finally {
      await scorer.close();
    }
  });

  it('whose replacement cannot load the model (the package changed on disk) leaves the scorer not ready: model_unavailable, with why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scorer-replaced-'));
    cpSync(FIXTURE, dir, { recursive: true });
    const scorer = await createScorer({ ...base, modelDir: dir, workers: 1 });
    try {
      expect(await scorer.score([{ conversation: chat(4) }])).toHaveLength(1);
      writeFileSync(join(dir, 'tokenizer.json'), readFileSync(join(dir, 'tokenizer.json'), 'utf8') + ' ');
      await workerThreads()[0]?.terminate();
      await until(async () => (!scorer.ready ? true : undefined), 15_000);
      expect(scorer.loadError).toMatch(/SHA-256 mismatch for tokenizer\.json/);
      expect(scorer.manifest).toBeUndefined();
      const err = await rejection(scorer.score([{ conversation: chat(4) }]));
      expect(err.kind).toBe('model_unavailable');
      expect(err.message).toMatch(/SHA-256 mismatch/);
    } finally {
      await scorer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('per-request timeout', () => {
  it('rejects timeout when scoring outlasts the deadline, and the scorer keeps serving', async () => {
    const scorer = await createScorer({ ...base, modelDir: FIXTURE, workers: 1 });
    const slow = [{ conversation: longChat(500_000) }, { conversation: longChat(500_000) }];
    const err = await rejection(scorer.score(slow, { timeoutMs: 20 }));
    expect(err.kind).toBe('timeout');
    expect(await scorer.score([{ conversation: chat(4) }])).toHaveLength(1);
    await scorer.close();
  });
});

describe('large calls are streamed through the pool and never hold every slot', () => {
  it('a small call made while a large batch is being scored finishes long before it, with the scores it gets alone', async () => {
    // Two slots, so that two large calls without the gate would fill them.
    const scorer = await createScorer({ ...base, workers: 1, tasksPerWorker: 2, modelDir: FIXTURE, timeoutMs: 120_000 });
    try {
      const big = Array.from({ length: 12 }, (_, i) => ({ conversation: `${longChat(150_000)}\nuser2: ${i}` }));
      const small = [{ conversation: chat(10) }];
      const [alone] = await scorer.score(small);
      // Two large calls: together they could fill both of the worker's slots.
      let bigDone = 0;
      const large = [scorer.score(big), scorer.score(big)].map((p) =>
        p.then((x) => {
          bigDone++;
          return x;
        }),
      );
      for (const p of large) p.catch(() => {});
      await new Promise((r) => setTimeout(r, 50));
      const [beside] = await scorer.score(small);
      // Both large calls still have most of their 12 tasks to run when the small one is answered.
      expect(bigDone).toBe(0);
      // Batched with other work in one ONNX run, padding moves the floats a hair; nothing else changes.
      expect(beside?.harmful_score).toBeCloseTo(alone?.harmful_score ?? -1, 5);
      for (const side of ['neither', 'user1', 'user2'] as const) expect(beside?.user_probabilities[side]).toBeCloseTo(alone?.user_probabilities[side] ?? -1, 5);
      expect([beside?.risk_level, beside?.predatory_user]).toEqual([alone?.risk_level, alone?.predatory_user]);
      for (const p of large) expect(await p).toHaveLength(12);
    } finally {
      await scorer.close();
    }
  });

  it.each([
    [1, 8, 1],
    [2, 8, 3],
    [2, 1, 1],
  ])('large calls hold at most LARGE_TASKS_PER_WORKER slots a worker less one, however many tasks a worker may hold (%i workers, %i tasks each: %i)', async (workers, tasksPerWorker, expected) => {
    expect(LARGE_TASKS_PER_WORKER).toBe(2);
    const scorer = await createScorer({ ...base, workers, tasksPerWorker, modelDir: FIXTURE, timeoutMs: 120_000 });
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, scorer.inFlight)), 1);
    try {
      const big = Array.from({ length: 4 }, (_, i) => ({ conversation: `${longChat(150_000)}\nuser2: ${i}` }));
      // Three large calls of several tasks each want more slots than the gate gives them.
      const done = await Promise.all([scorer.score(big), scorer.score(big), scorer.score(big)]);
      expect(done.map((d) => d.length)).toEqual([4, 4, 4]);
      expect(most).toBe(expected);
    } finally {
      clearInterval(sampler);
      await scorer.close();
    }
  });

  it('MAX_QUEUE bounds the large calls waiting for a slot, which the queue depth counts: beyond it a call is refused overloaded at once', async () => {
    const scorer = await createScorer({ ...base, workers: 1, maxQueue: 1, modelDir: FIXTURE, timeoutMs: 120_000 });
    try {
      const big = Array.from({ length: 6 }, () => ({ conversation: longChat(150_000) }));
      const running = [scorer.score(big), scorer.score(big)];
      // The second call's task waits at the gate: the queue depth (the metric the queue-full alert reads) counts it.
      await until(async () => (scorer.queueSize >= 1 ? true : undefined), 10_000);
      const third = await rejection(scorer.score(big));
      expect(third.kind).toBe('overloaded');
      await Promise.all(running);
      expect(scorer.queueSize).toBe(0);
    } finally {
      await scorer.close();
    }
  });
});

describe('chunkByCharacters cuts a batch into pool tasks of bounded size', () => {
  it('keeps input order, puts every index in one group, and never passes the limit except with a single longer conversation', () => {
    const reqs = [10, 500, 20, 480, 30, 5, 1200, 1].map((n) => ({ conversation: 'x'.repeat(n) }));
    const groups = chunkByCharacters(reqs, 600);
    expect(groups.flat()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const g of groups) {
      const chars = g.reduce((s, i) => s + reqs[i]!.conversation.length, 0);
      expect(chars <= 600 || g.length === 1).toBe(true);
    }
    expect(groups).toEqual([[0, 1, 2], [3, 4, 5], [6], [7]]);
  });
  it('uses one group for one request', () => {
    expect(chunkByCharacters([{ conversation: 'a' }], 4)).toEqual([[0]]);
  });
});
