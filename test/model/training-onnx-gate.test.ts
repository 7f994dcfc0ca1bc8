// The per-turn gate (scripts/train/onnx_gate.py): a call that asks no running score runs none of the
// nodes that compute it, and gating changes no output bit, whatever rows a call asks for.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toModelInputs } from '../../src/scoring/encode.ts';
import { runModel, type ModelItem } from '../../src/scoring/inference.ts';
import { TRAINING_PYTHON, TRAINING_PYTHON_HINT } from '../../scripts/train/python.ts';
import { probeItems as probesUnder, rawOutputs } from '../helpers/probe-outputs.ts';
import { hasTorch, trainingPython } from '../helpers/training.ts';

const TRAIN_DIR = join(import.meta.dirname, '../..', 'scripts/train');
const MODEL_DIR = join(import.meta.dirname, '../..', 'models', 'conversation-risk');
if (!hasTorch) console.warn(`training-onnx-gate: skipped, ${TRAINING_PYTHON_HINT}`);

/** The shipped package's segments for the invariance probes, with `perTurn` chosen per segment. */
const probeItems = (perTurn: (i: number) => boolean): Promise<ModelItem[]> => probesUnder(MODEL_DIR, perTurn);

/** The names of the nodes onnxruntime's profiler saw run, over one call of `items`. */
async function nodesRun(onnxPath: string, items: ModelItem[]): Promise<Set<string>> {
  const dir = mkdtempSync(join(tmpdir(), 'gate-profile-'));
  const session = await ort.InferenceSession.create(onnxPath, { enableProfiling: true, profileFilePrefix: join(dir, 'run') });
  await runModel(session, items);
  session.endProfiling();
  await session.release();
  const file = readdirSync(dir).find((f) => f.endsWith('.json'));
  const events = JSON.parse(readFileSync(join(dir, file as string), 'utf8')) as Array<{ cat?: string; name: string }>;
  rmSync(dir, { recursive: true, force: true });
  return new Set(events.filter((e) => e.cat === 'Node' && e.name.endsWith('_kernel_time')).map((e) => e.name.replace(/_kernel_time$/, '')));
}

describe.skipIf(!hasTorch)('per-turn gate (onnx_gate.py)', () => {
  let dir: string;
  let traced: string;
  let exported: string;
  let regated: string;
  let perTurnNodes: string[];

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gate-'));
    [traced, exported, regated] = ['traced', 'exported', 'regated'].map((n) => join(dir, `${n}.onnx`)) as [string, string, string];
    // A pair shaped as the shipped one (a member reading the speakers with side ages, a blind member),
    // with the shipped vocabulary's size so that the probes' ids index it; random weights.
    const vocab = (JSON.parse(readFileSync(join(MODEL_DIR, 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } }).model.vocab;
    const size = Math.max(...Object.values(vocab)) + 1;
    perTurnNodes = trainingPython<string[]>([
      'import onnx',
      'from model import ConversationRisk, Ensemble',
      'from onnx_export import export_contract_onnx',
      'torch.manual_seed(3)',
      `a = ConversationRisk(${size}, emb=16, hidden=24, side_ages=True, harm_reads_sides=True)`,
      `b = ConversationRisk(${size}, emb=16, hidden=24, blind_reading=True)`,
      'pair = Ensemble([a, b]).eval()',
      `export_contract_onnx(pair, ${JSON.stringify(traced)}, ${size}, gate=False)`,
      `export_contract_onnx(pair, ${JSON.stringify(exported)}, ${size})`,
      'g = onnx.load(' + JSON.stringify(exported) + ').graph',
      'branch = next(a.g for n in g.node if n.op_type == "If" for a in n.attribute if a.name == "then_branch")',
      'print(json.dumps([n.name for n in branch.node]))',
    ].join('\n'));
    execFileSync(TRAINING_PYTHON, [join(TRAIN_DIR, 'onnx_gate.py'), traced, regated]);
  }, 120_000);

  it('moves the running-score nodes behind an If, and the command line gates a traced graph to the same bytes', () => {
    expect(perTurnNodes.length).toBeGreaterThan(50);
    expect(readFileSync(regated).equals(readFileSync(exported))).toBe(true);
    expect(readFileSync(traced).equals(readFileSync(exported))).toBe(false);
  });

  it('changes no output bit, for calls that ask every running score, none or some', async () => {
    for (const ask of [() => true, () => false, (i: number) => i % 3 === 1]) {
      const items = await probeItems(ask);
      const [before, after] = [await rawOutputs(traced, items), await rawOutputs(exported, items)];
      expect(Array.from(after.harm)).toEqual(Array.from(before.harm));
      expect(Array.from(after.speaker)).toEqual(Array.from(before.speaker));
      expect(after.turns.map((t) => (t === undefined ? undefined : Array.from(t)))).toEqual(before.turns.map((t) => (t === undefined ? undefined : Array.from(t))));
    }
  });

  it('answers a call that asks no running score with an empty [0, turns] tensor, as the traced graph does', async () => {
    const inputs = toModelInputs(await probeItems(() => false));
    const { batch, turns, tokens } = inputs.dims;
    for (const path of [traced, exported]) {
      const session = await ort.InferenceSession.create(path);
      const out = await session.run({
        input_ids: new ort.Tensor('int64', inputs.input_ids, [batch, turns, tokens]),
        speaker_ids: new ort.Tensor('int64', inputs.speaker_ids, [batch, turns]),
        age_features: new ort.Tensor('float32', inputs.age_features, [batch, 8]),
        turn_rows: new ort.Tensor('int64', new BigInt64Array(0), [0]),
      });
      await session.release();
      expect(out.turn_harm_logits?.type).toBe('float32');
      expect(out.turn_harm_logits?.dims).toEqual([0, turns]);
    }
  });

  it('runs none of the running-score nodes for a call that asks no running score, and runs them when one is asked', async () => {
    const plain = await nodesRun(exported, await probeItems(() => false));
    const explained = await nodesRun(exported, await probeItems((i) => i === 0));
    const inBranch = (seen: Set<string>) => perTurnNodes.filter((n) => seen.has(n)).length;
    expect(inBranch(plain)).toBe(0);
    expect(inBranch(explained)).toBeGreaterThan(0);
    // The traced graph runs them either way: what the gate saves.
    expect(inBranch(await nodesRun(traced, await probeItems(() => false)))).toBeGreaterThan(0);
  });

  it('leaves a gated graph as it is', () => {
    const same = trainingPython<boolean>(['import onnx', 'from onnx_gate import gate_per_turn', `m = onnx.load(${JSON.stringify(exported)})`, 'before = m.SerializeToString()', 'print(json.dumps(gate_per_turn(m).SerializeToString() == before))'].join('\n'));
    expect(same).toBe(true);
  });

  it('ships a gated graph (models/conversation-risk/model.onnx)', () => {
    const gated = trainingPython<boolean>(['import onnx', 'from onnx_gate import is_gated', `print(json.dumps(is_gated(onnx.load(${JSON.stringify(join(MODEL_DIR, 'model.onnx'))}))))`].join('\n'));
    expect(gated).toBe(true);
  });
});
