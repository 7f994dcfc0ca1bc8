// train.sh --turn-piece-tokens (recipe setting TURN_PIECE_TOKENS): every turn with a speaker cut into
// pieces of that many tokens, in the tensor export, the training and the package alike, so the server
// (which cuts by the manifest's segment) reads a chat as the network was trained to. The shipped
// recipe (3.17.0, as 3.6.0) cuts turns as flat text is, 8 tokens, a contract-3 package (training-smoke.test.ts);
// 3.5.0's recipe cuts turns at 32 and flat text at 8, which only contract 4 can name, and no member
// reads blind (BLIND_MEMBERS 0).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createScorer } from '../../src/scoring/scorer.ts';
import type { ModelManifest } from '../../src/scoring/types.ts';
import { memberHyperparameters } from '../helpers/training.ts';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';

const hasTorch = spawnSync(TRAINING_PYTHON, ['-c', 'import torch, onnx'], { stdio: 'ignore' }).status === 0;

describe.skipIf(!hasTorch)("smoke training of 3.5.0's recipe (--recipe 3.5.0)", () => {
  const out = join(mkdtempSync(join(tmpdir(), 'turn-pieces-')), 'model');
  afterAll(() => {
    rmSync(join(out, '..'), { recursive: true, force: true });
    rmSync(`${out}.work`, { recursive: true, force: true });
  });

  it('exports, trains and packages 32-token turns beside 8-token flat pieces (contract 4), no member reading blind, and the engine serves the package', async () => {
    execFileSync('bash', ['scripts/train/train.sh', '--smoke', '--recipe', '3.5.0', '--out', out], { stdio: 'pipe', timeout: 170_000 });
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as ModelManifest;
    expect(manifest).toMatchObject({ contract_version: 4, segment: { max_turns: 64, max_tokens_per_turn: 32, max_tokens_per_flat_piece: 8 } });
    const pieces = readFileSync(join(`${out}.work`, 'segments.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => (JSON.parse(line) as { input_ids: number[][] }).input_ids.map((ids) => ids.filter((id) => id !== 0).length));
    expect(Math.max(...pieces)).toBe(32);
    const member = (seed: number) => memberHyperparameters(`${out}.work`, seed);
    expect(member(7)).toMatchObject({ turn_piece_tokens: 32, flat_piece_tokens: 8, blind_reading: false });
    expect(member(8)).toMatchObject({ turn_piece_tokens: 32, flat_piece_tokens: 8, blind_reading: false });
    const scorer = await createScorer({ modelDir: out, workers: 1, intraOpThreads: 1, maxQueue: 10, timeoutMs: 30_000 });
    try {
      const [p] = await scorer.score([{ conversation: 'user1: hey how was the game last night did you win in the end\nuser2: we lost by two goals but it was fun' }]);
      expect(p?.harmful_score).toBeGreaterThanOrEqual(0);
      expect(p?.num_segments).toBe(1);
    } finally {
      await scorer.close();
    }
  }, 180_000);
});
