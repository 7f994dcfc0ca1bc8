// A packaged ensemble's members rebuilt as train.py's member directories (scripts/train/rebuild_members.py),
// so that a run retrains one member and keeps the others as they ship (train.sh --member-from): the
// rebuilt members are the package's to the bit.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelManifest } from '../../src/scoring/types.ts';
import { TRAINING_PYTHON, TRAINING_PYTHON_HINT } from '../../scripts/train/python.ts';
import { hasTorch, trainingPython } from '../helpers/training.ts';

const MODEL_DIR = join(import.meta.dirname, '../..', 'models', 'conversation-risk');
const REBUILD = join(import.meta.dirname, '../..', 'scripts', 'train', 'rebuild_members.py');
if (!hasTorch) console.warn(`training-rebuild-members: skipped, ${TRAINING_PYTHON_HINT}`);

interface MemberInfo {
  hyperparameters: Record<string, unknown>;
  calibration: ModelManifest['calibration'];
  selected_epoch: Record<string, number>;
  folded: boolean;
  pretrained_vectors: boolean;
  conversations: Record<string, number>;
  rebuilt_from: { model: string; version: string; sha256: string };
}

type ShippedMember = { seed: number; recipe: Record<string, unknown>; selected_epoch: Record<string, number>; calibration: ModelManifest['calibration'] };

const rebuild = (model: string, out: string) => spawnSync(TRAINING_PYTHON, ['-W', 'ignore', REBUILD, '--model', model, '--out', out], { encoding: 'utf8' });

describe.skipIf(!hasTorch)('members rebuilt from a package (rebuild_members.py)', () => {
  let dir: string;
  const manifest = JSON.parse(readFileSync(join(MODEL_DIR, 'manifest.json'), 'utf8')) as ModelManifest & {
    training_data: { ensemble: { members: ShippedMember[] }; conversations_used: Record<string, number>; hyperparameters: Record<string, unknown> };
  };
  const info = (k: number): MemberInfo => JSON.parse(readFileSync(join(dir, 'rebuilt', `member-${k}`, 'training.json'), 'utf8')) as MemberInfo;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rebuild-'));
    execFileSync(TRAINING_PYTHON, ['-W', 'ignore', REBUILD, '--model', MODEL_DIR, '--out', join(dir, 'rebuilt')]);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("joined again as ensemble.py joins members, they export the package's model.onnx byte for byte", () => {
    const out = join(dir, 'joined.onnx');
    const vocab = (JSON.parse(readFileSync(join(MODEL_DIR, 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } }).model.vocab;
    trainingPython<null>([
      'from ensemble import load_member, read_info',
      'from model import Ensemble',
      'from onnx_export import export_contract_onnx',
      `dirs = [${[1, 2].map((k) => JSON.stringify(join(dir, 'rebuilt', `member-${k}`))).join(', ')}]`,
      `size = ${Math.max(...Object.values(vocab)) + 1}`,
      // No vectors given: a folded member needs none (load_member), and one trained with them would refuse.
      'members = [load_member(d, read_info(d), size, None, True) for d in dirs]',
      `export_contract_onnx(Ensemble(members).eval(), ${JSON.stringify(out)}, size)`,
      'print("null")',
    ].join('\n'));
    expect(readFileSync(out).equals(readFileSync(join(MODEL_DIR, 'model.onnx')))).toBe(true);
  }, 120_000);

  it("records each member's seed, options, chosen epoch and calibration as the manifest gives them, and the package it came from", () => {
    const shipped = manifest.training_data.ensemble.members;
    expect(shipped).toHaveLength(2);
    shipped.forEach((m, i) => {
      const rebuilt = info(i + 1);
      expect(rebuilt.hyperparameters).toMatchObject({ ...m.recipe, seed: m.seed, hidden: 96, emb: 64 });
      expect(rebuilt.calibration).toEqual(m.calibration);
      expect(rebuilt.selected_epoch).toEqual(m.selected_epoch);
      expect(rebuilt.conversations).toEqual(manifest.training_data.conversations_used);
      expect(rebuilt).toMatchObject({ folded: true, pretrained_vectors: true });
      expect(rebuilt.rebuilt_from).toEqual({ model: manifest.name, version: manifest.version, sha256: manifest.files['model.onnx']?.sha256 });
    });
    // The first member's options that the second was not trained with are not carried over to it.
    expect(info(2).hyperparameters).not.toHaveProperty('side_ages');
    expect(info(2).hyperparameters).not.toHaveProperty('harm_reads_sides');
    expect(info(1).hyperparameters).toMatchObject({ side_ages: 0.5, harm_reads_sides: true, minilm_words: 100 });
    // Both read MiniLM's words since 3.14.0 (MINILM_WORDS 2), the second blind and taught.
    expect(info(2).hyperparameters).toMatchObject({ minilm_words: 100, blind_reading: true, teacher_weight: 0.5 });
    // ensemble.py's rule for members it joins: the same architecture and data, other seeds or options.
    expect(trainingPython<string>(`from ensemble import check_members, read_info\ncheck_members([read_info(${JSON.stringify(join(dir, 'rebuilt', 'member-1'))}), read_info(${JSON.stringify(join(dir, 'rebuilt', 'member-2'))})])\nprint(json.dumps("joined"))`)).toBe('joined');
  });

  it('refuses a package of one network', () => {
    const one = join(dir, 'one');
    cpSync(MODEL_DIR, one, { recursive: true });
    const m = JSON.parse(readFileSync(join(one, 'manifest.json'), 'utf8')) as { training_data: Record<string, unknown> };
    delete m.training_data.ensemble;
    writeFileSync(join(one, 'manifest.json'), JSON.stringify(m));
    const r = rebuild(one, join(dir, 'from-one'));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('one network, not an ensemble');
  });

  it('refuses a graph that its architecture would not export, rather than mapping weights by guess', () => {
    // A pair of the shipped members' kinds, narrower than the manifest says (hidden 24, not 96).
    const narrow = join(dir, 'narrow');
    cpSync(MODEL_DIR, narrow, { recursive: true });
    trainingPython<null>([
      'from model import ConversationRisk, Ensemble',
      'from onnx_export import export_contract_onnx',
      'torch.manual_seed(5)',
      'a = ConversationRisk(300, emb=16, hidden=24, side_ages=True, harm_reads_sides=True)',
      'b = ConversationRisk(300, emb=16, hidden=24, blind_reading=True)',
      `export_contract_onnx(Ensemble([a, b]).eval(), ${JSON.stringify(join(narrow, 'model.onnx'))}, 300)`,
      'print("null")',
    ].join('\n'));
    const r = rebuild(narrow, join(dir, 'from-narrow'));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('not what this code exports for its architecture');
  }, 60_000);
});
