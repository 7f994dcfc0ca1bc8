// The shipped model package: it satisfies the contract, fits the size budget, is padding-invariant
// through onnxruntime, and carries the calibration and the evaluation figures it was shipped with.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INVARIANCE_PROBES, paddingInvarianceGap } from '../../scripts/eval/invariance.ts';
import { loadModelPackage } from '../../src/scoring/model-package.ts';

const MODEL_DIR = join(import.meta.dirname, '../..', 'models', 'conversation-risk');

describe('shipped model models/conversation-risk', () => {
  it('passes the service package checks (manifest shape and SHA-256 of every file)', async () => {
    const manifest = await loadModelPackage(MODEL_DIR);
    expect(manifest).toMatchObject({ contract_version: 3, name: 'conversation-risk', segment: { max_turns: 64, max_tokens_per_turn: 8 } });
    expect(manifest.segment.max_tokens_per_flat_piece).toBeUndefined();
    expect(manifest.calibration.method).toBe('temperature');
  });

  it('stays within 40 MB of model files (the pretrained vectors ship folded into model.onnx, not as the 300 MB file)', () => {
    const bytes = ['model.onnx', 'tokenizer.json', 'manifest.json'].reduce((s, f) => s + statSync(join(MODEL_DIR, f)).size, 0);
    expect(bytes).toBeLessThan(40 * 1024 * 1024);
  });

  it('records its training data and held-out metrics in the manifest', async () => {
    const manifest = await loadModelPackage(MODEL_DIR);
    const sources = (manifest.training_data as { sources: Record<string, unknown> }).sources;
    const datasets = Object.keys(sources).filter((s) => s !== 'all');
    const real = ['casino', 'self-dialogue', 'synthetic-persona-chat', 'topical-chat'];
    // Each real set as written, and hosting generated exchanges (scripts/data/hosted.ts); the real SMS
    // and IRC chats only as hosts (scripts/data/texting.ts).
    const hostsOnly = ['irc-ubuntu', 'sms-spam-collection'];
    // Since 3.16.0 the relationship windows written blind too (scripts/data/written-windows.ts), and since 3.17.0
    // the first contacts written blind (written-contacts.ts), in training only: six copies of each.
    expect(datasets.sort()).toEqual([...real, 'generator', 'written', ...[...real, ...hostsOnly].map((r) => `${r}+generator`)].sort());
    expect(sources.written).toMatchObject({ train: 262 * 6 + 269 * 6, val: 0, test: 0 });
    expect(manifest.training_data).toMatchObject({ pretrained_vectors: true });
    expect(manifest.metrics).toHaveProperty('roc_auc');
    expect(manifest.metrics).toHaveProperty('real_benign_fpr');
  });

  it('gives the same outputs for a segment alone and padded in a batch (onnxruntime)', async () => {
    expect(await paddingInvarianceGap(MODEL_DIR, INVARIANCE_PROBES)).toBeLessThan(1e-4);
  });
});
