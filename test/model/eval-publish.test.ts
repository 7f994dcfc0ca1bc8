// npm run eval publishes a package's figures into its manifest and the model card only when it scores
// the package against the corpus it was trained on: releases that add training slices share one test
// split, so a stale corpus would score the test split alike and the train-split figures (structure
// baseline, validation ECE) wrongly. The package's own corpus is told by its splits' sizes, which the
// manifest records.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { corpusMismatch, splitSizes } from '../../scripts/eval/publish.ts';

const trainedOn = { training_data: { conversations_used: { train: 42215, val: 6125 } } };

describe('eval: the corpus a package is published against (corpusMismatch)', () => {
  it('accepts a corpus whose train and validation splits have the sizes the model was trained on', () => {
    expect(corpusMismatch(trainedOn, { train: 42215, val: 6125 })).toBeUndefined();
  });

  it("names both sizes when a corpus is another release's (3.6.0's corpus against 3.7.0's package)", () => {
    expect(corpusMismatch(trainedOn, { train: 39588, val: 5752 })).toBe(
      "the corpus's train / validation splits hold 39588 / 5752 conversations, the model was trained on 42215 / 6125",
    );
  });

  it('refuses a corpus that differs in its validation split alone', () => {
    expect(corpusMismatch(trainedOn, { train: 42215, val: 6124 })).toMatch(/6124/);
  });

  it('cannot tell, and so accepts, where the manifest records no training sizes (a package from elsewhere)', () => {
    expect(corpusMismatch({}, { train: 1, val: 1 })).toBeUndefined();
    expect(corpusMismatch({ training_data: { conversations_used: { train: '42215' } } }, { train: 1, val: 1 })).toBeUndefined();
  });

  it('counts each split, the test split aside', () => {
    expect(splitSizes([{ split: 'train' }, { split: 'train' }, { split: 'val' }, { split: 'test' }])).toEqual({ train: 2, val: 1 });
  });
});

describe('npm run eval with a corpus the package was not trained on', () => {
  const dir = mkdtempSync(join(tmpdir(), 'eval-publish-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const model = join(dir, 'model');
  const corpus = join(dir, 'corpus.jsonl');
  // A copy of the shipped package whose manifest claims other training sizes than the one-line corpus.
  execFileSync('cp', ['-r', 'models/conversation-risk', model]);
  const manifest = JSON.parse(readFileSync(join(model, 'manifest.json'), 'utf8')) as { metrics?: unknown };
  writeFileSync(corpus, JSON.stringify({ id: 'x', conversation: 'user1: hi\nuser2: hello', label: 0, split: 'train', source: 'generator', family: 'short_small_talk', tags: [] }) + '\n');

  it("refuses before scoring anything when it would write the package's manifest, naming both sizes and the way out", () => {
    const r = spawnSync(process.execPath, ['scripts/eval/run.ts', '--model', model, '--corpus', corpus, '--out', join(dir, 'out'), '--no-plots'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`${corpus} is not ${model}'s training corpus: the corpus's train / validation splits hold 1 / 0 conversations`);
    expect(r.stderr).toContain('--no-manifest --no-card');
    expect(JSON.parse(readFileSync(join(model, 'manifest.json'), 'utf8')).metrics).toEqual(manifest.metrics);
  });
});
