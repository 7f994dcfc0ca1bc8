// The invariance probes (scripts/eval/invariance.ts) as a package encodes them, and one ONNX file's raw
// outputs for them: what the training tests compare between graphs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { INVARIANCE_PROBES } from '../../scripts/eval/invariance.ts';
import { encodeConversation, loadTokenizer } from '../../src/scoring/encode.ts';
import { runModel, type ModelItem, type RawOutputs } from '../../src/scoring/inference.ts';
import type { ModelManifest } from '../../src/scoring/types.ts';

/** The probes' segments under `modelDir`'s tokenizer and segment sizes; `perTurn(i)` says whether segment i asks its running score. */
export async function probeItems(modelDir: string, perTurn: (i: number) => boolean): Promise<ModelItem[]> {
  const manifest = JSON.parse(readFileSync(join(modelDir, 'manifest.json'), 'utf8')) as ModelManifest;
  const tokenizer = loadTokenizer(join(modelDir, 'tokenizer.json'));
  const items: ModelItem[] = [];
  for (const r of INVARIANCE_PROBES) {
    const enc = await encodeConversation(tokenizer, r, manifest.segment);
    for (const segment of enc.segments) items.push({ segment, ageFeatures: enc.ageFeatures, perTurn: perTurn(items.length) });
  }
  return items;
}

/** One ONNX file's raw outputs for `items`, in one run of a session opened and released for it. */
export async function rawOutputs(onnxPath: string, items: ModelItem[]): Promise<RawOutputs> {
  const session = await ort.InferenceSession.create(onnxPath);
  try {
    return await runModel(session, items);
  } finally {
    await session.release();
  }
}
