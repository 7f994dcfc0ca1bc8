// The model package in MODEL_DIR: manifest shape, file hashes, and the ONNX session's signature.
// Every check throws ModelPackageError with a message an operator can act on.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, normalize, isAbsolute } from 'node:path';
import type { ModelManifest } from './types.ts';

export class ModelPackageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ModelPackageError';
  }
}

export const REQUIRED_INPUTS = ['input_ids', 'speaker_ids', 'age_features', 'turn_rows'] as const;
export const REQUIRED_OUTPUTS = ['harm_logit', 'speaker_logits', 'turn_harm_logits'] as const;
const REQUIRED_FILES = ['model.onnx', 'tokenizer.json'] as const;
const SPEAKER_LABELS = ['user1', 'user2', 'neither'];

/** The tensors and labels docs/model-contract.md (version 4) fixes, as every new manifest states them. */
export const CONTRACT: Pick<ModelManifest, 'contract_version' | 'inputs' | 'outputs' | 'labels'> = {
  contract_version: 4,
  inputs: {
    input_ids: { dtype: 'int64', shape: ['batch', 'turns', 'tokens'] },
    speaker_ids: { dtype: 'int64', shape: ['batch', 'turns'] },
    age_features: { dtype: 'float32', shape: ['batch', 8] },
    turn_rows: { dtype: 'int64', shape: ['rows'] },
  },
  outputs: {
    harm_logit: { dtype: 'float32', shape: ['batch'] },
    speaker_logits: { dtype: 'float32', shape: ['batch', 3] },
    turn_harm_logits: { dtype: 'float32', shape: ['rows', 'turns'] },
  },
  labels: { harmful: ['benign', 'harmful'], speaker: ['user1', 'user2', 'neither'] },
};

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function positiveInt(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v > 0;
}

function sameNames(actual: readonly string[], expected: readonly string[]): boolean {
  return actual.length === expected.length && expected.every((n) => actual.includes(n));
}

/** Checks the manifest's shape against docs/model-contract.md and returns it typed. */
export function validateManifest(value: unknown): ModelManifest {
  const fail = (what: string): never => {
    throw new ModelPackageError(`manifest.json: ${what}`);
  };
  if (!isRecord(value)) return fail('not a JSON object');
  // Version 1 packages never saw speaker id 3 (flat text); version 2 packages lack the per-turn output
  // that explanations read and were trained on balanced rather than fixed-size segments. Version 3
  // packages differ from 4 only in how flat text is cut, which their manifest says (see segment).
  if (value.contract_version !== 3 && value.contract_version !== CONTRACT.contract_version) {
    fail(`contract_version must be 3 or ${CONTRACT.contract_version} (older packages lack flat-text speakers or per-turn outputs: retrain with npm run train), got ${JSON.stringify(value.contract_version)}`);
  }
  if (typeof value.name !== 'string' || value.name === '') fail('name must be a non-empty string');
  if (typeof value.version !== 'string' || value.version === '') fail('version must be a non-empty string');
  const files = value.files;
  if (!isRecord(files)) return fail('files must be an object');
  for (const f of REQUIRED_FILES) if (!(f in files)) fail(`files must name ${f}`);
  for (const [name, entry] of Object.entries(files)) {
    if (!isRecord(entry) || typeof entry.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(entry.sha256)) {
      fail(`files["${name}"].sha256 must be 64 lower-case hex digits`);
    }
    const path = normalize(name);
    if (isAbsolute(path) || path.startsWith('..')) fail(`files["${name}"] must lie inside the model directory`);
  }
  if (!isRecord(value.inputs) || !sameNames(Object.keys(value.inputs), REQUIRED_INPUTS)) {
    fail(`inputs must name exactly ${REQUIRED_INPUTS.join(', ')}`);
  }
  if (!isRecord(value.outputs) || !sameNames(Object.keys(value.outputs), REQUIRED_OUTPUTS)) {
    fail(`outputs must name exactly ${REQUIRED_OUTPUTS.join(', ')}`);
  }
  const labels = value.labels;
  if (!isRecord(labels) || JSON.stringify(labels.speaker) !== JSON.stringify(SPEAKER_LABELS)) {
    fail(`labels.speaker must be ${JSON.stringify(SPEAKER_LABELS)}`);
  }
  const segment = value.segment;
  if (!isRecord(segment) || !positiveInt(segment.max_turns) || !positiveInt(segment.max_tokens_per_turn)) {
    return fail('segment.max_turns and segment.max_tokens_per_turn must be positive integers');
  }
  // A model trained on one cut of flat text and served another would read flat exports wrongly, so the
  // cut is stated, never assumed: version 4 names it, version 3 (one cut for every turn) must not.
  if (value.contract_version === 3 && segment.max_tokens_per_flat_piece !== undefined) {
    fail('segment.max_tokens_per_flat_piece needs contract_version 4 (version 3 cuts flat text like any turn)');
  }
  if (value.contract_version !== 3 && !positiveInt(segment.max_tokens_per_flat_piece)) {
    fail(`segment.max_tokens_per_flat_piece must be a positive integer in contract_version ${CONTRACT.contract_version}`);
  }
  if (!isRecord(value.age_features) || value.age_features.size !== 8) fail('age_features.size must be 8');
  const cal = value.calibration;
  if (
    !isRecord(cal) ||
    cal.method !== 'temperature' ||
    typeof cal.temperature !== 'number' ||
    !(cal.temperature > 0) ||
    !Number.isFinite(cal.temperature) ||
    typeof cal.bias !== 'number' ||
    !Number.isFinite(cal.bias)
  ) {
    fail('calibration must be {"method":"temperature","temperature":>0,"bias":finite number}');
  }
  return value as unknown as ModelManifest;
}

/** SHA-256 of a file, streamed so a large model is never held twice in memory. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Reads and validates MODEL_DIR/manifest.json and verifies every listed file's SHA-256. With
 * `pinnedManifestSha256` (MODEL_SHA256) the manifest itself must hash to it: a package swapped in
 * with its own consistent manifest is refused.
 */
export async function loadModelPackage(modelDir: string, pinnedManifestSha256?: string): Promise<ModelManifest> {
  let bytes: Buffer;
  try {
    bytes = await readFile(join(modelDir, 'manifest.json'));
  } catch (err) {
    throw new ModelPackageError(`cannot read ${join(modelDir, 'manifest.json')}: ${(err as Error).message}`, { cause: err });
  }
  if (pinnedManifestSha256 !== undefined) {
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== pinnedManifestSha256.toLowerCase()) {
      throw new ModelPackageError(`manifest.json SHA-256 is ${actual}, but MODEL_SHA256 pins ${pinnedManifestSha256.toLowerCase()}: refusing a model other than the pinned one`);
    }
  }
  const text = bytes.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ModelPackageError(`manifest.json is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const manifest = validateManifest(parsed);
  for (const [name, entry] of Object.entries(manifest.files)) {
    let actual: string;
    try {
      actual = await sha256File(join(modelDir, name));
    } catch (err) {
      throw new ModelPackageError(`cannot read model file ${name}: ${(err as Error).message}`, { cause: err });
    }
    if (actual !== entry.sha256) {
      throw new ModelPackageError(`SHA-256 mismatch for ${name}: manifest says ${entry.sha256}, file is ${actual}`);
    }
  }
  return manifest;
}

/** Checks a loaded ONNX session's input and output names against the contract. */
export function checkSessionSignature(session: { inputNames: readonly string[]; outputNames: readonly string[] }): void {
  if (!sameNames(session.inputNames, REQUIRED_INPUTS)) {
    throw new ModelPackageError(
      `model.onnx inputs are [${session.inputNames.join(', ')}], the contract requires [${REQUIRED_INPUTS.join(', ')}]`,
    );
  }
  if (!sameNames(session.outputNames, REQUIRED_OUTPUTS)) {
    throw new ModelPackageError(
      `model.onnx outputs are [${session.outputNames.join(', ')}], the contract requires [${REQUIRED_OUTPUTS.join(', ')}]`,
    );
  }
}
