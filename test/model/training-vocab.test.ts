// The hybrid vocabulary: whole words with pretrained vectors beside WordPiece pieces, and the vector
// matrix the trainer reads. Runs on a small file in wink's format, the real reader and builder.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTokenizer, buildVocab, DEFAULT_VOCAB } from '../../scripts/data/build-tokenizer.ts';
import { embeddingMatrix, readWordVectors, writeEmbeddingMatrix } from '../../scripts/data/embeddings.ts';

const dir = mkdtempSync(join(tmpdir(), 'vocab-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file in wink's layout: ranked words, each vector followed by its norm and rank. */
function winkFile(words: string[], dims = 4): string {
  const vectors: Record<string, number[]> = {};
  words.forEach((w, i) => (vectors[w] = [...Array.from({ length: dims }, (_, k) => (((i + 1) * (k + 2)) % 7) - 3), 1, i]));
  const path = join(dir, `wink-${words.length}.json`);
  writeFileSync(path, JSON.stringify({ precision: 8, l2NormIndex: dims, wordIndex: dims + 1, size: words.length, dimensions: dims, words, vectors, unkVector: [] }));
  return path;
}

const TEXTS = ['hey wanna meet at the park', 'ur so cute lol', 'heyyy whats up', 'hey hey hey'];

describe('hybrid vocabulary', () => {
  const vectors = readWordVectors(winkFile(['the', ',', 'park', 'webcam', 'cute', "n't", 'asl', 'Paris', 'café', 'meet']));
  const vocab = buildVocab(TEXTS, { ...DEFAULT_VOCAB, size: 60, minWordCount: 1, vectors, vectorTop: 5 });

  it('holds the most frequent plain words of the vector file, even ones the training text never uses', () => {
    expect(vocab).toHaveProperty('webcam');
    expect(vocab).toHaveProperty('park');
    // Only whole words the pre-tokenizer can yield: no punctuation, capitals or accents.
    for (const w of [',', "n't", 'Paris', 'café']) expect(vocab).not.toHaveProperty(w);
  });

  it('holds training words that have a vector beyond the top ranks', () => {
    expect(vectors.ranked.indexOf('meet')).toBeGreaterThan(5);
    expect(vocab).toHaveProperty('meet');
  });

  it('keeps WordPiece pieces, so words the vector file lacks still split into pieces', async () => {
    const tokenizer = buildTokenizer(vocab);
    const enc = await tokenizer.encode('heyyyy webcam', null, { addSpecialTokens: false });
    const tokens = enc.getTokens();
    expect(tokens).toContain('webcam');
    expect(tokens[0]).not.toBe('[UNK]');
    expect(tokens.some((t) => t.startsWith('##'))).toBe(true);
  });

  it('does not count pretrained words against the trainable budget', () => {
    const without = buildVocab(TEXTS, { ...DEFAULT_VOCAB, size: 60, minWordCount: 1 });
    expect(Object.keys(vocab).length).toBeGreaterThan(Object.keys(without).length);
  });
});

describe('the pretrained matrix', () => {
  const vectors = readWordVectors(winkFile(['hello', 'world', 'meet']));
  const vocab = { '[PAD]': 0, '[UNK]': 1, hello: 2, '##lo': 3, world: 4, zzz: 5 };
  const m = embeddingMatrix(vocab, vectors);

  it('gives each entry with a vector a unit-length row and every other entry zeros', () => {
    const row = (i: number): number[] => Array.from(m.matrix.subarray(i * 4, i * 4 + 4));
    expect(m.rows).toBe(6);
    expect(m.covered).toBe(2);
    for (const i of [2, 4]) expect(Math.hypot(...row(i))).toBeCloseTo(1, 6);
    for (const i of [0, 1, 3, 5]) expect(row(i)).toEqual([0, 0, 0, 0]);
  });

  it('writes little-endian float32 rows with a description the trainer checks', () => {
    const path = join(dir, 'emb.f32');
    writeEmbeddingMatrix(path, m, 4);
    const bytes = readFileSync(path);
    expect(bytes.length).toBe(6 * 4 * 4);
    expect(bytes.readFloatLE(2 * 16)).toBeCloseTo(m.matrix[8] as number, 7);
    expect(JSON.parse(readFileSync(`${path}.json`, 'utf8'))).toMatchObject({ rows: 6, dimensions: 4, covered: 2, dtype: 'float32-le' });
  });
});
