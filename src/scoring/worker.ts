// A piscina worker: loads the tokenizer and the ONNX session once, then tokenizes, segments, and runs
// the model on batches shared by the tasks it holds, and aggregates. ONNX never runs on the main thread.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { workerData } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import type { Tokenizer } from 'tokenizers';
import { aggregateSegments, calibrate, confidence, isHarmful, predatoryUser, riskLevel, softmax3, type SegmentOutput } from './aggregate.ts';
import { CancelledError, MicroBatcher } from './batcher.ts';
import { emptyConversationSegment, encodeConversation, tokenizerFromJson, usesFastPath, type EncodedConversation, type EncodedSegment } from './encode.ts';
import { runningByPiece, traceTurns } from './explain.ts';
import { runModel, type ModelItem } from './inference.ts';
import { checkSessionSignature, ModelPackageError } from './model-package.ts';
import { planRuns } from './run-plan.ts';
import { paddedTokens, sortByShape } from './shape-order.ts';
import { WORKER_LOAD_FAILED, type ModelManifest, type Prediction, type ScoreRequest } from './types.ts';

export interface WorkerConfig {
  modelDir: string;
  manifest: ModelManifest;
  intraOpThreads: number;
  /** Most segments per ONNX run. */
  maxBatchSegments: number;
  /** Most (padded) token slots per ONNX run: bounds the model's activations for long conversations. */
  maxBatchTokens: number;
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
export type WorkerReadiness = { ok: true; fastTokenizer: boolean } | { ok: false; error: string };

interface Engine {
  tokenizer: Tokenizer;
  batcher: MicroBatcher<ModelItem, SegmentOutput>;
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
  const tokenizer = tokenizerFromJson(readVerified('tokenizer.json').toString('utf8'));
  const session = await ort.InferenceSession.create(readVerified('model.onnx'), {
    intraOpNumThreads: config.intraOpThreads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    // Memory patterns are planned and cached per input shape; our shapes change with every batch,
    // so the cache only grows (about 40 MB of peak RSS in npm run bench) and buys no speed.
    enableMemPattern: false,
  });
  checkSessionSignature(session);
  const batcher = new MicroBatcher<ModelItem, SegmentOutput>((items) => runBatch(session, items), {
    maxItems: config.maxBatchSegments,
    maxCost: config.maxBatchTokens,
    cost: (item) => paddedTokens(item.segment),
  });
  return { tokenizer, batcher };
}

/** One real inference, so the first request does not pay for lazy initialisation. */
async function warmup(e: Engine): Promise<Engine> {
  const conv = await encodeConversation(e.tokenizer, { conversation: 'user1: hello\nuser2: hi' }, config.manifest.segment);
  await e.batcher.submit(conv.segments.map((segment) => ({ segment, ageFeatures: conv.ageFeatures })), () => false);
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
    async (e) => announce({ ok: true, fastTokenizer: await usesFastPath(e.tokenizer) }),
    (err: unknown) => announce({ ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
}

/** The batcher's batch, as one or more ONNX runs of segments of similar length (run-plan.ts). */
async function runBatch(session: ort.InferenceSession, items: ModelItem[]): Promise<SegmentOutput[]> {
  const out = new Array<SegmentOutput>(items.length);
  for (const run of planRuns(items.map((item) => item.segment.inputIds.length))) {
    const { harm, speaker, turns } = await runModel(session, run.map((i) => items[i] as ModelItem));
    run.forEach((item, b) => {
      out[item] = segmentOutput(harm[b] as number, speaker.subarray(b * 3, b * 3 + 3), turns[b]);
    });
  }
  return out;
}

function segmentOutput(harm: number, speaker: Float32Array, logits: Float32Array | undefined): SegmentOutput {
  const calibration = config.manifest.calibration;
  const o: SegmentOutput = {
    p: calibrate(harm, calibration),
    s: softmax3(speaker[0] as number, speaker[1] as number, speaker[2] as number),
  };
  if (logits !== undefined) {
    const perPiece = new Float64Array(logits.length);
    for (let i = 0; i < logits.length; i++) perPiece[i] = calibrate(logits[i] as number, calibration);
    // The segment's own output is its score after its last piece; the per-piece output agrees with it
    // to float rounding (the contract bounds the gap), and using it makes the last entry equal the score.
    perPiece[perPiece.length - 1] = o.p;
    o.turns = perPiece;
  }
  return o;
}

export default async function score(task: WorkerTask): Promise<WorkerResult> {
  // A replacement worker that cannot load (files changed on disk since start) says so in a way the pool
  // recognises, so the scorer reports itself not ready instead of failing every task as a bug.
  const { tokenizer, batcher } = await engine.catch((err: unknown) => {
    throw new Error(WORKER_LOAD_FAILED + (err instanceof Error ? err.message : String(err)));
  });
  const segmentShape = config.manifest.segment;
  const encoded: EncodedConversation[] = await Promise.all(task.requests.map((r) => encodeConversation(tokenizer, r, segmentShape)));
  const owners: number[] = [];
  /** Each item's position among its conversation's segments: batches are sorted by shape, not order. */
  const positions: number[] = [];
  const items: ModelItem[] = [];
  // An explained conversation also needs the score before its first token: one extra one-piece item,
  // owned by -1 - conversation so aggregation never sees it.
  const emptySegment = emptyConversationSegment(tokenizer);
  encoded.forEach((conv, conversation) => {
    const perTurn = conv.turns !== undefined;
    conv.segments.forEach((segment, k) => {
      owners.push(conversation);
      positions.push(k);
      items.push({ segment, ageFeatures: conv.ageFeatures, perTurn });
    });
    if (perTurn) {
      owners.push(-1 - conversation);
      positions.push(0);
      items.push({ segment: emptySegment, ageFeatures: conv.ageFeatures });
    }
  });
  if (encoded.length > 1) sortByShape(items, owners, positions);
  const started = performance.now();
  let segmentOutputs: SegmentOutput[];
  try {
    // The request may time out while waiting here: its segments are then skipped, not run.
    segmentOutputs = await batcher.submit(items, () => Atomics.load(task.cancel, 0) !== 0);
  } catch (err) {
    if (err instanceof CancelledError) return { kind: 'cancelled' };
    throw err;
  }
  const inferenceSeconds = (performance.now() - started) / 1000;
  // Back in conversation order: the running score reads segments in sequence.
  const outputs: SegmentOutput[][] = encoded.map((conv) => new Array<SegmentOutput>(conv.segments.length));
  const starts: number[] = encoded.map(() => 0);
  segmentOutputs.forEach((o, i) => {
    const owner = owners[i] as number;
    if (owner < 0) starts[-1 - owner] = o.p;
    else (outputs[owner] as SegmentOutput[])[positions[i] as number] = o;
  });
  const predictions = encoded.map((conv, i): WorkerPrediction => {
    const segs = outputs[i] as SegmentOutput[];
    const { harmfulScore, userProbabilities } = aggregateSegments(segs, conv.speakersKnown);
    const prediction: WorkerPrediction = {
      harmful_score: harmfulScore,
      is_harmful: isHarmful(harmfulScore),
      risk_level: riskLevel(harmfulScore),
      predatory_user: predatoryUser(userProbabilities, conv.speakersKnown),
      user_probabilities: userProbabilities,
      confidence: confidence(harmfulScore, userProbabilities),
      num_segments: conv.segments.length,
      used_age_features: conv.usedAgeFeatures,
    };
    if (conv.turns !== undefined) {
      const running = runningByPiece(segs.map((o) => o.turns ?? new Float64Array(0)));
      prediction.explanation = traceTurns(conv.turns, running, starts[i] as number);
    }
    return prediction;
  });
  return { kind: 'scored', predictions, inferenceSeconds, segments: encoded.map((c) => c.segments.length) };
}
