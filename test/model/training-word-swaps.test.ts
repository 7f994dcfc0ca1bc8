// Word swaps (train.py --word-swap, word_swaps.py): a training augmentation that puts a word's near
// neighbour among the pretrained vectors in its place, so that a line in unseen wording lands nearer the
// lines the network knows. Off in every release; these cases hold what the option promises.
import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';

const hasTorch = spawnSync(TRAINING_PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;

function python<T>(script: string): T {
  const out = execFileSync(TRAINING_PYTHON, ['-W', 'ignore', '-c', `import json, sys, torch\nsys.path.insert(0, 'scripts/train')\n${script}`], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1) as string) as T;
}

// Five entries with vectors: 1 and 2 point almost the same way, 3 a little apart, 4 opposite; 0 (padding)
// and 5 (a WordPiece piece or a number) have none. The last two columns stand for MiniLM's reading.
const VECTORS = `
v = torch.tensor([[0, 0, 0, 0], [0, 0, 1.0, 0.0], [0, 0, 0.99, 0.14], [0, 0, 0.6, 0.8], [0, 0, -1.0, 0.0], [0, 0, 0, 0]])
v[1:5, :2] = torch.tensor([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [10.0, 0.0]])  # the own-vector half tells another story
`;

describe.skipIf(!hasTorch)('word swaps (word_swaps.py, train.py --word-swap)', () => {
  it('draws each entry\'s neighbours by cosine over MiniLM\'s part of the row, best first, never itself, none under the least cosine and none for entries without a vector', () => {
    const r = python<{ table: number[][]; whole: number[][] }>(`
from word_swaps import neighbour_table
${VECTORS}
print(json.dumps({"table": neighbour_table(v, 2, k=2, min_cosine=0.5).tolist(), "whole": neighbour_table(v, 0, k=2, min_cosine=0.6).tolist()}))`);
    expect(r.table).toEqual([[-1, -1], [2, 3], [1, 3], [2, 1], [-1, -1], [-1, -1]]);
    // Over the whole row (no MiniLM part) the own half decides: 1 and 4 are then the one close pair (0.63).
    expect(r.whole).toEqual([[-1, -1], [4, -1], [-1, -1], [-1, -1], [1, -1], [-1, -1]]);
  }, 120_000);

  it('swaps only tokens that have a neighbour, for one of their neighbours, at about the rate asked; padding and the rest never move', () => {
    const r = python<{ share: number; wrong: number; untouched: boolean }>(`
from word_swaps import neighbour_table, swap_words
${VECTORS}
table = neighbour_table(v, 2, k=2, min_cosine=0.5)
torch.manual_seed(3)
ids = torch.randint(0, 6, (400, 16, 8))
out = swap_words(ids, table, 0.3)
has = table[ids][..., 0] >= 0
moved = out != ids
allowed = (table[ids] == out.unsqueeze(-1)).any(-1)
print(json.dumps({"share": float(moved[has].float().mean()), "wrong": int((moved & ~allowed).sum()), "untouched": bool(torch.equal(out[~has], ids[~has]))}))`);
    expect(r.share).toBeGreaterThan(0.27);
    expect(r.share).toBeLessThan(0.33);
    expect(r.wrong).toBe(0);
    expect(r.untouched).toBe(true);
  }, 120_000);

  it('at rate 0 returns the ids as they were and draws nothing, so a recipe without swaps trains as it always did', () => {
    const r = python<{ same: boolean; stream: boolean }>(`
from word_swaps import swap_words
torch.manual_seed(4)
ids = torch.randint(0, 6, (4, 5, 3))
table = torch.full((6, 2), -1, dtype=torch.int64); table[1] = torch.tensor([2, 3])
torch.manual_seed(5); out = swap_words(ids, table, 0.0); after = torch.rand(3)
torch.manual_seed(5); plain = torch.rand(3)
print(json.dumps({"same": out is ids, "stream": bool(torch.equal(after, plain))}))`);
    expect(r.same).toBe(true);
    expect(r.stream).toBe(true);
  }, 120_000);

  it('is a training option, so a member trained with swaps joins one trained without (ensemble.py TRAINING_OPTIONS)', () => {
    const r = python<boolean>(`
from ensemble import TRAINING_OPTIONS
print(json.dumps({"word_swap", "word_swap_neighbours", "word_swap_min_cosine"} <= TRAINING_OPTIONS))`);
    expect(r).toBe(true);
  }, 120_000);

  it('refuses --word-swap without the pretrained vectors it draws neighbours from', () => {
    const run = spawnSync(TRAINING_PYTHON, ['-W', 'ignore', 'scripts/train/train.py', '--segments', '/nonexistent', '--tokenizer', '/nonexistent', '--out', '/nonexistent', '--word-swap', '0.1'], { encoding: 'utf8' });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('--word-swap draws neighbours from the pretrained vectors: give --embeddings');
  }, 120_000);
});
