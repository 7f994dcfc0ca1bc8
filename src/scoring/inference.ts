// One ONNX run of the contract model: encoded segments in, raw outputs out (docs/model-contract.md).
// The worker, the evaluation's padding check and the tests all call this, so they feed the model alike.
import * as ort from 'onnxruntime-node';
import { toModelInputs, type EncodedSegment } from './encode.ts';

export interface ModelItem {
  segment: EncodedSegment;
  ageFeatures: number[];
  /** Whether this segment's running harm after each piece is wanted (explanations). */
  perTurn?: boolean;
}

export interface RawOutputs {
  /** One uncalibrated harm logit per item. */
  harm: Float32Array;
  /** Three speaker logits per item (user1, user2, neither), row after row. */
  speaker: Float32Array;
  /**
   * For the items that asked for it (perTurn), in item order: one uncalibrated harm logit per piece,
   * what the segment would score had it ended after that piece. Undefined for the other items.
   */
  turns: Array<Float32Array | undefined>;
}

/** Pads the items into one batch and runs the session on it. */
export async function runModel(session: ort.InferenceSession, items: ModelItem[]): Promise<RawOutputs> {
  const inputs = toModelInputs(items);
  const { batch, turns, tokens } = inputs.dims;
  const rows: number[] = [];
  items.forEach((item, i) => {
    if (item.perTurn === true) rows.push(i);
  });
  // An empty row list asks for no running score: a gated graph (scripts/train/onnx_gate.py) then runs
  // none of its nodes, and one without the gate runs them on empty tensors.
  const result = await session.run({
    input_ids: new ort.Tensor('int64', inputs.input_ids, [batch, turns, tokens]),
    speaker_ids: new ort.Tensor('int64', inputs.speaker_ids, [batch, turns]),
    age_features: new ort.Tensor('float32', inputs.age_features, [batch, 8]),
    turn_rows: new ort.Tensor('int64', BigInt64Array.from(rows, BigInt), [rows.length]),
  });
  const perTurn = result.turn_harm_logits?.data as Float32Array;
  const out: Array<Float32Array | undefined> = new Array(batch).fill(undefined);
  rows.forEach((row, r) => {
    const pieces = (items[row] as ModelItem).segment.inputIds.length;
    out[row] = perTurn.slice(r * turns, r * turns + pieces);
  });
  return { harm: result.harm_logit?.data as Float32Array, speaker: result.speaker_logits?.data as Float32Array, turns: out };
}
