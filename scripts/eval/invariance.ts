// Checks the contract's padding rule on a model package: a segment scored alone and scored inside
// a batch padded to longer segments and pieces must give the same outputs (within 1e-4).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { encodeConversation, loadTokenizer } from '../../src/scoring/encode.ts';
import { runModel, type ModelItem } from '../../src/scoring/inference.ts';
import type { ModelManifest, ScoreRequest } from '../../src/scoring/types.ts';

/** Largest absolute output difference between each segment alone and inside one padded batch. */
export async function paddingInvarianceGap(modelDir: string, requests: ScoreRequest[]): Promise<number> {
  const manifest = JSON.parse(readFileSync(join(modelDir, 'manifest.json'), 'utf8')) as ModelManifest;
  const tokenizer = loadTokenizer(join(modelDir, 'tokenizer.json'));
  const session = await ort.InferenceSession.create(join(modelDir, 'model.onnx'));
  try {
    const items: ModelItem[] = [];
    for (const r of requests) {
      const enc = await encodeConversation(tokenizer, r, manifest.segment);
      for (const segment of enc.segments) items.push({ segment, ageFeatures: enc.ageFeatures });
    }
    const together = await runModel(session, items);
    let gap = 0;
    for (let i = 0; i < items.length; i++) {
      const alone = await runModel(session, [items[i]!]);
      gap = Math.max(gap, Math.abs((alone.harm[0] as number) - (together.harm[i] as number)));
      for (let k = 0; k < 3; k++) gap = Math.max(gap, Math.abs((alone.speaker[k] as number) - (together.speaker[i * 3 + k] as number)));
    }
    return gap;
  } finally {
    await session.release();
  }
}

/** Conversations of very different turn counts and turn lengths, so a batch pads both axes. */
export const INVARIANCE_PROBES: ScoreRequest[] = [
  { conversation: 'user1: hi' },
  { conversation: 'user1: hey are your parents around\nuser2: no they are at work', age_a: '34', age_b: 'minor' },
  {
    conversation: Array.from({ length: 90 }, (_, i) => `user${(i % 2) + 1}: message number ${i} with a rather long line of text that will be cut into several pieces because it goes on and on`).join('\n'),
  },
];
