import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeConversation, loadTokenizer } from '../../../src/scoring/encode.ts';
import { runModel, type ModelItem } from '../../../src/scoring/inference.ts';
import { checkSessionSignature, loadModelPackage, ModelPackageError, validateManifest } from '../../../src/scoring/model-package.ts';

const FIXTURE = join(import.meta.dirname, '../../fixtures/contract-model');
const manifestJson = (): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8'));

describe('the contract fixture model, run by onnxruntime', () => {
  let session: ort.InferenceSession;
  beforeAll(async () => {
    session = await ort.InferenceSession.create(join(FIXTURE, 'model.onnx'), { intraOpNumThreads: 1 });
  });
  afterAll(async () => {
    await session.release();
  });

  const run = (items: ModelItem[]) => runModel(session, items);

  it('has exactly the contract inputs and outputs', () => {
    expect(() => checkSessionSignature(session)).not.toThrow();
  });

  it('gives the same outputs for a segment scored alone and padded with extra turns and tokens (1e-4)', async () => {
    const tokenizer = loadTokenizer(join(FIXTURE, 'tokenizer.json'));
    const seg = { max_turns: 64, max_tokens_per_turn: 32 };
    const short = await encodeConversation(tokenizer, { conversation: 'user1: hi\nuser2: hello there', age_a: '12' }, seg);
    const long = await encodeConversation(
      tokenizer,
      { conversation: Array.from({ length: 40 }, (_, i) => `user${(i % 2) + 1}: some long line number ${i} to chat about music and games`).join('\n') },
      seg,
    );
    const shortItem = { segment: short.segments[0]!, ageFeatures: short.ageFeatures };
    const alone = await run([shortItem]);
    const padded = await run([shortItem, { segment: long.segments[0]!, ageFeatures: long.ageFeatures }]);
    expect(Math.abs(alone.harm[0]! - padded.harm[0]!)).toBeLessThan(1e-4);
    for (let k = 0; k < 3; k++) expect(Math.abs(alone.speaker[k]! - padded.speaker[k]!)).toBeLessThan(1e-4);
  });

  it('reads the age features: the same text with different ages scores differently', async () => {
    const segment = { inputIds: [[20, 21, 22]], speakerIds: [1] };
    const none = await run([{ segment, ageFeatures: [0, 0, 0, 0, 0, 0, 0, 0] }]);
    const aged = await run([{ segment, ageFeatures: [1, 1, 0.12, 0.12, 1, 0, 0.45, 0.45] }]);
    expect(none.harm[0]).not.toBeCloseTo(aged.harm[0]!, 4);
  });
});

describe('the model package is verified at load', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'model-pkg-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('accepts the fixture package and returns its manifest', async () => {
    const m = await loadModelPackage(FIXTURE);
    expect(m.contract_version).toBe(4);
    expect(m.segment).toEqual({ max_turns: 64, max_tokens_per_turn: 32, max_tokens_per_flat_piece: 8 });
  });

  it('still accepts a contract 3 package, which names no flat piece length', () => {
    const m = manifestJson();
    m.contract_version = 3;
    delete (m.segment as Record<string, unknown>).max_tokens_per_flat_piece;
    expect(validateManifest(m).segment).toEqual({ max_turns: 64, max_tokens_per_turn: 32 });
  });

  it('rejects a file whose SHA-256 does not match the manifest', async () => {
    const d = join(dir, 'tampered');
    cpSync(FIXTURE, d, { recursive: true });
    writeFileSync(join(d, 'tokenizer.json'), `${readFileSync(join(d, 'tokenizer.json'), 'utf8')} `);
    await expect(loadModelPackage(d)).rejects.toThrow(/SHA-256 mismatch for tokenizer\.json/);
  });

  it('rejects a missing directory or manifest with a clear error', async () => {
    await expect(loadModelPackage(join(dir, 'absent'))).rejects.toThrow(ModelPackageError);
    await expect(loadModelPackage(join(dir, 'absent'))).rejects.toThrow(/manifest\.json/);
  });

  it('rejects a manifest that is not JSON', async () => {
    const d = join(dir, 'notjson');
    cpSync(FIXTURE, d, { recursive: true });
    writeFileSync(join(d, 'manifest.json'), '{ nope');
    await expect(loadModelPackage(d)).rejects.toThrow(/not valid JSON/);
  });

  it.each([
    ['contract_version 1', (m: Record<string, unknown>) => (m.contract_version = 1), /contract_version/],
    ['contract_version 2 (no per-turn output)', (m: Record<string, unknown>) => (m.contract_version = 2), /retrain/],
    ['files without model.onnx', (m: Record<string, unknown>) => delete (m.files as Record<string, unknown>)['model.onnx'], /model\.onnx/],
    ['upper-case hash', (m: Record<string, unknown>) => ((m.files as Record<string, { sha256: string }>)['tokenizer.json']!.sha256 = 'A'.repeat(64)), /sha256/],
    ['a file outside the directory', (m: Record<string, unknown>) => ((m.files as Record<string, unknown>)['../x'] = { sha256: 'a'.repeat(64) }), /inside/],
    ['an extra input', (m: Record<string, unknown>) => ((m.inputs as Record<string, unknown>).mask = {}), /inputs/],
    ['a missing output', (m: Record<string, unknown>) => delete (m.outputs as Record<string, unknown>).harm_logit, /outputs/],
    ['speaker labels', (m: Record<string, unknown>) => ((m.labels as Record<string, unknown>).speaker = ['a', 'b', 'c']), /labels/],
    ['segment', (m: Record<string, unknown>) => ((m.segment as Record<string, unknown>).max_turns = 0), /segment/],
    ['contract 4 without a flat piece length', (m: Record<string, unknown>) => delete (m.segment as Record<string, unknown>).max_tokens_per_flat_piece, /max_tokens_per_flat_piece/],
    ['contract 3 with a flat piece length', (m: Record<string, unknown>) => (m.contract_version = 3), /max_tokens_per_flat_piece needs contract_version 4/],
    ['age size', (m: Record<string, unknown>) => ((m.age_features as Record<string, unknown>).size = 4), /age_features/],
    ['temperature', (m: Record<string, unknown>) => ((m.calibration as Record<string, unknown>).temperature = 0), /calibration/],
  ])('rejects a manifest with a bad %s', (_name, mutate, message) => {
    const m = manifestJson();
    mutate(m);
    expect(() => validateManifest(m)).toThrow(message);
  });

  it('rejects a session whose names differ from the contract', () => {
    expect(() => checkSessionSignature({ inputNames: ['input_ids', 'speaker_ids'], outputNames: ['harm_logit', 'speaker_logits'] })).toThrow(/inputs/);
    expect(() =>
      checkSessionSignature({ inputNames: ['input_ids', 'speaker_ids', 'age_features', 'turn_rows'], outputNames: ['harm_logit', 'logits', 'turn_harm_logits'] }),
    ).toThrow(/outputs/);
    // A contract-2 graph (no per-turn output) is refused by name, not at its first explained call.
    expect(() =>
      checkSessionSignature({ inputNames: ['input_ids', 'speaker_ids', 'age_features', 'turn_rows'], outputNames: ['harm_logit', 'speaker_logits'] }),
    ).toThrow(/turn_harm_logits/);
  });
});

describe.each([
  ['the contract fixture model', FIXTURE],
  ['the shipped model', join(import.meta.dirname, '../../../models/conversation-risk')],
])('per-turn output of %s (since contract 3): the segment cut after each piece, for the rows asked', (_name, dir) => {
  let session: ort.InferenceSession;
  let tokenizer: ReturnType<typeof loadTokenizer>;
  beforeAll(async () => {
    session = await ort.InferenceSession.create(join(dir, 'model.onnx'), { intraOpNumThreads: 1 });
    tokenizer = loadTokenizer(join(dir, 'tokenizer.json'));
  });
  afterAll(async () => {
    await session.release();
  });

  const seg = { max_turns: 64, max_tokens_per_turn: 32 };
  const lines = Array.from({ length: 30 }, (_, i) => `user${(i % 2) + 1}: line ${i} about school, music, my parents and meeting up`);

  it('gives per-piece logits only for the rows asked, each equal to scoring the segment cut there (1e-4)', async () => {
    const whole = await encodeConversation(tokenizer, { conversation: lines.join('\n'), age_b: '13' }, seg);
    const other = await encodeConversation(tokenizer, { conversation: 'user1: hi\nuser2: hello' }, seg);
    const item = { segment: whole.segments[0]!, ageFeatures: whole.ageFeatures };
    const out = await runModel(session, [{ segment: other.segments[0]!, ageFeatures: other.ageFeatures }, { ...item, perTurn: true }]);
    expect(out.turns[0]).toBeUndefined();
    const perTurn = out.turns[1]!;
    expect(perTurn).toHaveLength(item.segment.inputIds.length);
    expect(Math.abs(perTurn.at(-1)! - out.harm[1]!)).toBeLessThan(1e-4);
    for (const cut of [1, 2, 7, 19]) {
      const prefix = { inputIds: item.segment.inputIds.slice(0, cut), speakerIds: item.segment.speakerIds.slice(0, cut) };
      const alone = await runModel(session, [{ segment: prefix, ageFeatures: item.ageFeatures }]);
      expect(Math.abs(perTurn[cut - 1]! - alone.harm[0]!)).toBeLessThan(1e-4);
    }
  });

  it('answers the same harm and speaker outputs whether or not per-turn output is asked', async () => {
    const whole = await encodeConversation(tokenizer, { conversation: lines.slice(0, 9).join('\n') }, seg);
    const item = { segment: whole.segments[0]!, ageFeatures: whole.ageFeatures };
    const plain = await runModel(session, [item]);
    const asked = await runModel(session, [{ ...item, perTurn: true }]);
    expect(Math.abs(plain.harm[0]! - asked.harm[0]!)).toBeLessThan(1e-6);
    expect(Array.from(asked.speaker)).toEqual(Array.from(plain.speaker));
  });
});
