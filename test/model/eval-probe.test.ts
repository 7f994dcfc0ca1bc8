// The character n-gram probe (scripts/eval/probe.py) on a synthetic corpus whose positives differ from
// its negatives by one cue word (and, as written, by one speaker's name): it learns the cue, it reads
// flat text unless told otherwise, and it reports what the evaluation needs for each kind of slice.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng, type Rng } from '../../scripts/data/rng.ts';
import { toJsonl, type LabeledConversation, type Split } from '../../scripts/data/record.ts';
import { TRAINING_PYTHON, TRAINING_PYTHON_HINT } from '../../scripts/train/python.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const PROBE = join(ROOT, 'scripts/eval/probe.py');
const PY = TRAINING_PYTHON;
const hasSklearn = spawnSync(PY, ['-c', 'import sklearn, numpy'], { stdio: 'ignore' }).status === 0;
if (!hasSklearn) console.warn(`eval-probe: skipped, ${TRAINING_PYTHON_HINT}`);

const CUE = 'zephyrine';
const WORDS = ['school', 'game', 'pizza', 'weekend', 'music', 'phone', 'later', 'friend', 'movie', 'homework', 'dog', 'bus', 'lunch', 'rain', 'song'];
/** As written, each class has its own first speaker: only flattening keeps the probe from reading the name. */
const SPEAKERS = { 1: ['maxwell', 'lee'], 0: ['samantha', 'lee'] } as const;

interface Options {
  label: 0 | 1;
  cue: boolean;
  split?: Split;
}

/** The lines of a chat: a few lines of pool words, the cue word in one of them when asked for. */
function body(rng: Rng, cue: boolean): string[] {
  const lines = Array.from({ length: rng.int(3, 6) }, () => Array.from({ length: rng.int(3, 8) }, () => rng.pick(WORDS)).join(' '));
  if (cue) {
    const at = rng.int(0, lines.length - 1);
    lines[at] = `${lines[at]} ${CUE}`;
  }
  return lines;
}

function record(id: string, lines: readonly string[], { label, split = 'test' }: Options): LabeledConversation {
  const names = SPEAKERS[label];
  return {
    id,
    conversation: lines.map((l, i) => `${names[i % 2]}: ${l}`).join('\n'),
    label,
    predator: label ? 'user1' : 'neither',
    family: 'synthetic',
    split,
    source: 'test',
    tags: label ? ['cue'] : [],
  };
}

/** `n` chats per class, the positives with the cue. */
function chats(seed: number, n: number, split: Split): LabeledConversation[] {
  const rng = createRng(seed);
  return Array.from({ length: 2 * n }, (_, i) => {
    const label = (i % 2) as 0 | 1;
    return record(`${split}-${seed}-${i}`, body(rng, label === 1), { label, cue: label === 1, split });
  });
}

/** Pairs of chats with the same lines and no cue: only the speakers' names tell the classes apart. */
function speakerPairs(seed: number, n: number): LabeledConversation[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, i) => {
    const lines = body(rng, false);
    return [record(`names-${i}-1`, lines, { label: 1, cue: false }), record(`names-${i}-0`, lines, { label: 0, cue: false })];
  }).flat();
}

interface Row {
  slice: string;
  n: number;
  positives: number;
  roc_auc: number | null;
  recall_at_0_5: number | null;
  negatives_flagged_at_0_5: number | null;
  recall_at_test_cut: number | null;
  negatives_flagged_at_test_cut: number | null;
  roc_auc_flat_under_1000: number | null;
  roc_auc_flat_1000_plus: number | null;
}

interface Report {
  slices: Row[];
  test_cut: number;
  train: { documents: number; positives: number; extra: number };
  features: number;
  top_features: { positive: [string, number][]; negative: [string, number][] } | null;
}

describe('character n-gram probe (scripts/eval/probe.py)', () => {
  let dir = '';
  let flat: Report;
  let asWritten: Report;
  let stdout = '';

  function probe(extra: string[]): { report: Report; stdout: string } {
    const out = join(dir, `report-${extra.length}.json`);
    const args = [PROBE, '--corpus', join(dir, 'corpus.jsonl'), '--slice', `heldout=${join(dir, 'heldout.jsonl')}`, '--slice', `names=${join(dir, 'names.jsonl')}`];
    args.push('--slice', `benign=${join(dir, 'benign.jsonl')}`, '--train-extra', join(dir, 'extra.jsonl'), '--by-tag', 'cue', '--top-features', '5', '--json', out, ...extra);
    const text = execFileSync(PY, args, { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
    return { report: JSON.parse(readFileSync(out, 'utf8')) as Report, stdout: text };
  }

  const row = (r: Report, name: string): Row => {
    const found = r.slices.find((s) => s.slice === name);
    if (found === undefined) throw new Error(`no slice ${name}`);
    return found;
  };

  beforeAll(() => {
    if (!hasSklearn) return;
    dir = mkdtempSync(join(tmpdir(), 'eval-probe-'));
    writeFileSync(join(dir, 'corpus.jsonl'), toJsonl([...chats(1, 150, 'train'), ...chats(2, 60, 'test'), ...chats(3, 20, 'val')]));
    writeFileSync(join(dir, 'heldout.jsonl'), toJsonl(chats(4, 60, 'test')));
    writeFileSync(join(dir, 'names.jsonl'), toJsonl(speakerPairs(5, 60)));
    // Training records whose split says test: --train-extra trains on all of them all the same.
    writeFileSync(join(dir, 'extra.jsonl'), toJsonl(chats(7, 20, 'test')));
    writeFileSync(join(dir, 'benign.jsonl'), toJsonl(chats(6, 40, 'test').filter((r) => r.label === 0)));
    ({ report: flat, stdout } = probe([]));
    ({ report: asWritten } = probe(['--keep-speakers']));
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!hasSklearn)('separates the classes by the cue word on a held-out slice (ROC-AUC > 0.9) and names the cue among its top n-grams', () => {
    expect(row(flat, 'heldout').roc_auc).toBeGreaterThan(0.9);
    expect(row(flat, 'test').roc_auc).toBeGreaterThan(0.9);
    expect(row(flat, 'heldout').recall_at_0_5).toBeGreaterThan(0.9);
    expect(flat.top_features?.positive.some(([g]) => CUE.includes(g.trim()) && g.trim().length >= 3)).toBe(true);
  });

  it.skipIf(!hasSklearn)('trains on the train split and every --train-extra record, whatever its split field says', () => {
    expect(flat.train).toEqual({ documents: 340, positives: 170, extra: 40 });
  });

  it.skipIf(!hasSklearn)('reads flat text by default: a slice whose classes differ only by speaker names scores 0.5, as written it does not', () => {
    const names = row(flat, 'names');
    expect([names.n, names.positives]).toEqual([120, 60]);
    expect(Math.abs((names.roc_auc as number) - 0.5)).toBeLessThan(0.05);
    // The control: with --keep-speakers the probe learns the names along with the cue.
    expect(row(asWritten, 'names').roc_auc).toBeGreaterThan(0.9);
  });

  it.skipIf(!hasSklearn)('drops `name: ` prefixes at line starts only, keeping colons inside lines', () => {
    const script = `import sys; sys.path.insert(0, ${JSON.stringify(dirname(PROBE))}); from probe import flat_text; print(flat_text(sys.argv[1]))`;
    const text = 'jake99: hi mom: home by 9\nmia_k:\tmeet at 12:30\nhttp://x.y ok\n\nnote:nospace';
    expect(execFileSync(PY, ['-B', '-c', script, text], { encoding: 'utf8' }).trim()).toBe('hi mom: home by 9 meet at 12:30 http://x.y ok note:nospace');
  });

  it.skipIf(!hasSklearn)('reports a flagged share and no ROC-AUC or recall for a slice of negatives only', () => {
    const benign = row(flat, 'benign');
    expect([benign.n, benign.positives]).toEqual([40, 0]);
    expect(benign.roc_auc).toBeNull();
    expect(benign.recall_at_0_5).toBeNull();
    expect(benign.negatives_flagged_at_0_5).toBeGreaterThanOrEqual(0);
    expect(benign.negatives_flagged_at_0_5).toBeLessThan(0.2);
    expect(benign.negatives_flagged_at_test_cut).toBeGreaterThanOrEqual(0);
    // The test cut flags no more than 10 % of the test split's negatives.
    expect(row(flat, 'test').negatives_flagged_at_test_cut).toBeLessThanOrEqual(0.1);
  });

  it.skipIf(!hasSklearn)('writes the documented fields to JSON for every slice, built-in and named, and the same figures to the Markdown table', () => {
    expect(flat.slices.map((s) => s.slice)).toEqual(['test', 'test_flat_under_1000', 'tag:cue', 'heldout', 'names', 'benign']);
    const fields = ['slice', 'n', 'positives', 'roc_auc', 'recall_at_0_5', 'negatives_flagged_at_0_5', 'recall_at_test_cut', 'negatives_flagged_at_test_cut', 'roc_auc_flat_under_1000', 'roc_auc_flat_1000_plus'];
    for (const s of flat.slices) expect(Object.keys(s).sort()).toEqual([...fields].sort());
    expect(Object.keys(flat)).toEqual(expect.arrayContaining(['corpus', 'options', 'train', 'features', 'test_cut', 'slices', 'top_features', 'seconds']));
    expect(typeof flat.test_cut).toBe('number');
    // Every chat here is short: the long band holds no chat, so no ROC-AUC there.
    expect(row(flat, 'test').roc_auc_flat_1000_plus).toBeNull();
    expect(row(flat, 'test').roc_auc_flat_under_1000).toBe(row(flat, 'test').roc_auc);
    expect(row(flat, 'test_flat_under_1000').n).toBe(120);
    expect(row(flat, 'tag:cue')).toMatchObject({ n: 60, positives: 60, roc_auc: null });
    expect(flat.top_features?.positive).toHaveLength(5);
    expect(flat.top_features?.negative).toHaveLength(5);
    const heldout = stdout.split('\n').find((l) => l.startsWith('| heldout |'));
    expect(heldout).toContain(`| ${row(flat, 'heldout').roc_auc?.toFixed(3)} |`);
  });
});
