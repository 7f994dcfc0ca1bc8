// One ONNX run of the contract model: encoded segments in, raw outputs out (docs/model-contract.md).
// The worker, the evaluation's padding check and the tests all call this, so they feed the model alike.
import * as ort from 'onnxruntime-node';
import { toModelInputs, type EncodedSegment } from './encode.ts';

export interface ModelItem {
  segment: EncodedSegment;
  ageFeatures: number[];
}

export interface RawOutputs {
  /** One uncalibrated harm logit per item. */
  harm: Float32Array;
  /** Three speaker logits per item (user1, user2, neither), row after row. */
  speaker: Float32Array;
}

/** Pads the items into one batch and runs the session on it. */
export async function runModel(session: ort.InferenceSession, items: ModelItem[]): Promise<RawOutputs> {
  const inputs = toModelInputs(items);
  const { batch, turns, tokens } = inputs.dims;
  const result = await session.run({
    input_ids: new ort.Tensor('int64', inputs.input_ids, [batch, turns, tokens]),
    speaker_ids: new ort.Tensor('int64', inputs.speaker_ids, [batch, turns]),
    age_features: new ort.Tensor('float32', inputs.age_features, [batch, 8]),
  });
  return { harm: result.harm_logit?.data as Float32Array, speaker: result.speaker_logits?.data as Float32Array };
}
