// A piscina worker: loads the tokenizer and the ONNX session once, then tokenizes, segments, runs the
// model in bounded batches and aggregates. ONNX runs synchronously on this thread, never the main one.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { Tokenizer } from 'tokenizers';
import { aggregateSegments, calibrate, confidence, isHarmful, predatoryUser, riskLevel, softmax3, type SegmentOutput } from './aggregate.ts';
import { encodeConversation, toModelInputs, type EncodedConversation, type EncodedSegment } from './encode.ts';
import { checkSessionSignature, ModelPackageError } from './model-package.ts';
import type { ModelManifest, Prediction, ScoreRequest } from './types.ts';

export interface WorkerConfig {
  modelDir: string;
  manifest: ModelManifest;
  intraOpThreads: number;
  /** Most segments per ONNX run; bounds memory for a 500,000-character conversation. */
  maxBatchSegments: number;
  /** BroadcastChannel name on which the worker reports that its model is loaded. */
  readyChannel: string;
}

/** A prediction without its preview, which the main thread cuts from the text it still holds. */
export type WorkerPrediction = Omit<Prediction, 'conversation_preview'>;

export interface WorkerTask {
  requests: ScoreRequest[];
  /** Set to 1 by the main thread when the request is abandoned; checked between ONNX runs. */
  cancel: Int32Array;
}

export type WorkerResult =
  | { kind: 'scored'; predictions: WorkerPrediction[]; inferenceSeconds: number; segments: number[] }
  | { kind: 'cancelled' };

/** What each worker announces on the `readyChannel` broadcast channel once it has loaded (or failed). */
export type WorkerReadiness = { ok: true } | { ok: false; error: string };

interface Engine {
  tokenizer: Tokenizer;
  session: ort.InferenceSession;
}

const config = workerData as WorkerConfig;

/** Reads a package file and checks its bytes against the manifest: what is hashed is what is loaded. */
function readVerified(name: string): Buffer {
  const data = readFileSync(join(config.modelDir, name));
  const actual = createHash('sha256').update(data).digest('hex');
  const expected = config.manifest.files[name]?.sha256;
  if (actual !== expected) throw new ModelPackageError(`SHA-256 mismatch for ${name} in worker: expected ${expected}, got ${actual}`);
  return data;
}

async function load(): Promise<Engine> {
  const tokenizer = Tokenizer.fromString(readVerified('tokenizer.json').toString('utf8'));
  const session = await ort.InferenceSession.create(readVerified('model.onnx'), {
    intraOpNumThreads: config.intraOpThreads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  checkSessionSignature(session);
  return { tokenizer, session };
}

/** One real inference, so the first request does not pay for lazy initialisation. */
async function warmup(e: Engine): Promise<Engine> {
  const conv = await encodeConversation(e.tokenizer, { conversation: 'user1: hello\nuser2: hi' }, config.manifest.segment);
  await runBatch(e.session, conv.segments.map((segment) => ({ conversation: 0, segment, ageFeatures: conv.ageFeatures, cost: 0 })), [[]]);
  return e;
}

// Loaded once per worker; a failure is announced, and reported by every task, instead of crashing.
const engine: Promise<Engine> = load().then(warmup);
{
  const channel = new BroadcastChannel(config.readyChannel);
  const announce = (m: WorkerReadiness): void => {
    channel.postMessage(m);
    channel.close();
  };
  engine.then(
    () => announce({ ok: true }),
    (err: unknown) => announce({ ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
}

interface Item {
  conversation: number;
  segment: EncodedSegment;
  ageFeatures: number[];
  /** Padded cost of the segment, used to group similar segments into one ONNX batch. */
  cost: number;
}

async function runBatch(session: ort.InferenceSession, items: Item[], out: SegmentOutput[][]): Promise<void> {
  const inputs = toModelInputs(items);
  const { batch, turns, tokens } = inputs.dims;
  const result = await session.run({
    input_ids: new ort.Tensor('int64', inputs.input_ids, [batch, turns, tokens]),
    speaker_ids: new ort.Tensor('int64', inputs.speaker_ids, [batch, turns]),
    age_features: new ort.Tensor('float32', inputs.age_features, [batch, 8]),
  });
  const harm = result.harm_logit?.data as Float32Array;
  const speaker = result.speaker_logits?.data as Float32Array;
  const calibration = config.manifest.calibration;
  for (let b = 0; b < batch; b++) {
    const item = items[b] as Item;
    (out[item.conversation] as SegmentOutput[]).push({
      p: calibrate(harm[b] as number, calibration),
      s: softmax3(speaker[b * 3] as number, speaker[b * 3 + 1] as number, speaker[b * 3 + 2] as number),
    });
  }
}

export default async function score(task: WorkerTask): Promise<WorkerResult> {
  const { tokenizer, session } = await engine;
  const segmentShape = config.manifest.segment;
  const encoded: EncodedConversation[] = await Promise.all(task.requests.map((r) => encodeConversation(tokenizer, r, segmentShape)));
  const items: Item[] = [];
  encoded.forEach((conv, conversation) => {
    for (const segment of conv.segments) {
      let longest = 0;
      for (const ids of segment.inputIds) if (ids.length > longest) longest = ids.length;
      items.push({ conversation, segment, ageFeatures: conv.ageFeatures, cost: segment.inputIds.length * 1024 + longest });
    }
  });
  // Segments of similar size share a batch, so little padding is computed; aggregation is order-free.
  if (encoded.length > 1) items.sort((a, b) => a.cost - b.cost);
  const outputs: SegmentOutput[][] = encoded.map(() => []);
  const started = performance.now();
  for (let at = 0; at < items.length; at += config.maxBatchSegments) {
    // The request may have timed out while this worker was busy: stop between ONNX runs.
    if (Atomics.load(task.cancel, 0) !== 0) return { kind: 'cancelled' };
    await runBatch(session, items.slice(at, at + config.maxBatchSegments), outputs);
  }
  const inferenceSeconds = (performance.now() - started) / 1000;
  const predictions = encoded.map((conv, i): WorkerPrediction => {
    const { harmfulScore, userProbabilities } = aggregateSegments(outputs[i] as SegmentOutput[]);
    return {
      harmful_score: harmfulScore,
      is_harmful: isHarmful(harmfulScore),
      risk_level: riskLevel(harmfulScore),
      predatory_user: predatoryUser(userProbabilities),
      user_probabilities: userProbabilities,
      confidence: confidence(harmfulScore, userProbabilities),
      num_segments: conv.segments.length,
      used_age_features: conv.usedAgeFeatures,
    };
  });
  return { kind: 'scored', predictions, inferenceSeconds, segments: encoded.map((c) => c.segments.length) };
}

