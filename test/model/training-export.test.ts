// The training-data export and the server must feed the model identical tensors for the same
// conversation: both run src/scoring/encode.ts, and Python's padding must equal toModelInputs.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildFromCorpus } from '../../scripts/data/build-tokenizer.ts';
import { exportSegments, toRequest, type SegmentRow } from '../../scripts/data/export.ts';
import { contractOf } from '../../scripts/train/package.ts';
import { validateManifest } from '../../src/scoring/model-package.ts';
import { generate } from '../../scripts/data/generate.ts';
import type { LabeledConversation } from '../../scripts/data/record.ts';
import { flatten, mergeSpeakerRuns } from '../../scripts/data/recut.ts';
import { parseTurns } from '../../src/scoring/conversation.ts';
import { encodeConversation, loadTokenizer, toModelInputs } from '../../src/scoring/encode.ts';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';

const PY = TRAINING_PYTHON;
const hasTorch = spawnSync(PY, ['-c', 'import torch, numpy'], { stdio: 'ignore' }).status === 0;
// Small shapes so that pieces and several segments occur in short conversations.
const SEGMENT = { max_turns: 8, max_tokens_per_turn: 6, max_tokens_per_flat_piece: 3 };

const extra: LabeledConversation[] = [
  {
    id: 'named',
    conversation: 'jake99: hey are ur parents home?? 😂\nmia_k: no, my mom works til 6\nsecond line of mia\njake99: delete our chats ok\nthird_guy: continues jake',
    label: 1,
    predator: 'user1',
    age_a: '30-35',
    age_b: 'minor',
    family: 'test',
    split: 'test',
    source: 'test',
  },
  { id: 'one-turn', conversation: 'hello there', label: 0, predator: 'neither', age_b: '15', family: 'test', split: 'test', source: 'test' },
];

// Harm that starts after several segments' worth of small talk, on a line of its own and on a
// continuation line (which belongs to the turn above it).
const smallTalk = Array.from({ length: 14 }, (_, i) => `${i % 2 === 0 ? 'sam' : 'kit'}: so what did you have for lunch today at school`);
const onsetRecords: LabeledConversation[] = [
  { id: 'onset-own-line', conversation: [...smallTalk, 'sam: dont tell your mom we talk ok', 'kit: ok'].join('\n'), onset_line: 14, label: 1, predator: 'user1', family: 'test', split: 'test', source: 'test' },
  { id: 'onset-continuation', conversation: [...smallTalk, 'kit: lol', 'send me a pic in the mirror', 'sam: no'].join('\n'), onset_line: 15, label: 1, predator: 'user2', family: 'test', split: 'test', source: 'test' },
];

/** Runs `lines` in Python after `imports` from scripts/train, and parses the JSON it prints. */
function trainPy(imports: string, lines: string[]): unknown {
  const script = ['import json, sys', `sys.path.insert(0, ${JSON.stringify(join(process.cwd(), 'scripts/train'))})`, imports, ...lines].join('\n');
  return JSON.parse(execFileSync(PY, ['-c', script], { encoding: 'utf8', maxBuffer: 64 << 20 }));
}

type Views = Record<string, { segments: Array<[number[][], number[]]>; onset: number; flat: boolean }>;

/**
 * views.py's rendered_view of every exported conversation, with an rng whose every draw is `draw`
 * (0 picks a flat view and any rate's option, 0.99 a view that keeps speakers and any rate of 1),
 * called with `rates` (rendered_view's arguments after the segment sizes).
 */
function renderedViews(rows: readonly SegmentRow[], draw: number, rates: string): Views {
  const path = join(mkdtempSync(join(tmpdir(), 'views-')), 'segments.jsonl');
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return trainPy('from data import load_conversations\nfrom views import rendered_view', [
    'class Draws:',
    `    def random(self): return ${draw}`,
    '    def choice(self, xs): return xs[0]',
    `views = {c["id"]: rendered_view(c, Draws(), max_turns=${SEGMENT.max_turns}, flat_tokens=${SEGMENT.max_tokens_per_flat_piece}, turn_tokens=${SEGMENT.max_tokens_per_turn}, ${rates}) for c in load_conversations(${JSON.stringify(path)})}`,
    'print(json.dumps({k: {"segments": v["segments"], "onset": v["onset"], "flat": v["flat"]} for k, v in views.items()}))',
  ]) as Views;
}

/** Flat views, rendered as one line when `oneLineRate` is 1. */
const flatViews = (rows: readonly SegmentRow[], oneLineRate: number): Views => renderedViews(rows, 0.0, `one_line_rate=${oneLineRate}`);

/** Views that keep their speakers, rendered with each speaker's runs merged. */
const mergedViews = (rows: readonly SegmentRow[]): Views => renderedViews(rows, 0.99, 'merge_rate=1.0');

describe('training-data export', () => {
  let dir: string;
  let tokenizerPath: string;
  let records: LabeledConversation[];
  let rows: SegmentRow[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'export-'));
    const corpus = generate({ seed: 3, n: 200 });
    tokenizerPath = join(dir, 'tokenizer.json');
    buildFromCorpus(corpus.map((r) => ({ ...r, split: 'train' })), { size: 1200, minCharCount: 2, minWordCount: 2 }).save(tokenizerPath);
    records = [...corpus.filter((r) => r.conversation.split('\n').length > 20).slice(0, 3), ...extra, ...onsetRecords];
    rows = [];
    await exportSegments(records, tokenizerPath, SEGMENT, (row) => {
      rows.push(row);
    });
  });

  it('writes one row per segment with labels, and long conversations span several segments', () => {
    expect(rows.filter((r) => r.conv === 'named')[0]).toMatchObject({ label: 1, predator: 'user1', has_ages: true, seg: 0 });
    expect(rows.filter((r) => r.conv === records[0]?.id).length).toBeGreaterThan(1);
    for (const row of rows) {
      expect(row.input_ids.length).toBeLessThanOrEqual(SEGMENT.max_turns);
      for (const ids of row.input_ids) {
        expect(ids.length).toBeGreaterThan(0);
        expect(ids.length).toBeLessThanOrEqual(SEGMENT.max_tokens_per_turn);
        expect(ids).not.toContain(0);
      }
    }
  });

  it('marks where the harm starts: the first piece of the turn holding onset_line, counted over all segments', async () => {
    const tokenizer = loadTokenizer(tokenizerPath);
    // The pieces before the onset are exactly those of the conversation cut before the onset's turn.
    const piecesOf = async (text: string) => (await encodeConversation(tokenizer, { conversation: text }, SEGMENT)).segments.reduce((n, s) => n + s.inputIds.length, 0);
    const lines = (r: LabeledConversation) => r.conversation.split('\n');
    const own = onsetRecords[0] as LabeledConversation;
    const cont = onsetRecords[1] as LabeledConversation;
    const onsetOf = (id: string) => new Set(rows.filter((x) => x.conv === id).map((x) => x.onset_piece));
    expect(onsetOf(own.id)).toEqual(new Set([await piecesOf(lines(own).slice(0, 14).join('\n'))]));
    expect(onsetOf(cont.id)).toEqual(new Set([await piecesOf(lines(cont).slice(0, 14).join('\n'))]));
    expect([...onsetOf(own.id)][0]).toBeGreaterThan(SEGMENT.max_turns);
    // Records that do not know their onset say so.
    for (const r of extra) expect(onsetOf(r.id)).toEqual(new Set([-1]));
  });

  it("gives, per conversation, exactly the tensors the server's path builds with toModelInputs", async () => {
    const tokenizer = loadTokenizer(tokenizerPath);
    for (const r of records) {
      const served = await encodeConversation(tokenizer, toRequest(r), SEGMENT);
      const server = toModelInputs(served.segments.map((segment) => ({ segment, ageFeatures: served.ageFeatures })));
      const mine = rows.filter((x) => x.conv === r.id);
      const exported = toModelInputs(mine.map((x) => ({ segment: { inputIds: x.input_ids, speakerIds: x.speaker_ids }, ageFeatures: x.age_features })));
      expect(exported.dims).toEqual(server.dims);
      expect(exported.input_ids).toEqual(server.input_ids);
      expect(exported.speaker_ids).toEqual(server.speaker_ids);
      expect(exported.age_features).toEqual(server.age_features);
    }
  });

  it.skipIf(!hasTorch)('is padded by the Python trainer exactly as toModelInputs pads a server batch', () => {
    const path = join(dir, 'segments.jsonl');
    writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const out = trainPy('from data import load_conversations, collate', [
      `convs = load_conversations(${JSON.stringify(path)})`,
      'ids, spk, ages, owner = collate(convs)',
      'print(json.dumps({"ids": ids.flatten().tolist(), "spk": spk.flatten().tolist(), "ages": ages.flatten().tolist(), "shape": list(ids.shape)}))',
    ]) as {
      ids: number[];
      spk: number[];
      ages: number[];
      shape: number[];
    };
    // Python groups segments by conversation in file order, which is the export order.
    const server = toModelInputs(rows.map((x) => ({ segment: { inputIds: x.input_ids, speakerIds: x.speaker_ids }, ageFeatures: x.age_features })));
    expect(out.shape).toEqual([server.dims.batch, server.dims.turns, server.dims.tokens]);
    expect(out.ids).toEqual(Array.from(server.input_ids, Number));
    expect(out.spk).toEqual(Array.from(server.speaker_ids, Number));
    expect(new Float32Array(out.ages)).toEqual(server.age_features);
  });

  it.skipIf(!hasTorch)("teaches the running score 0 before a harmful chat's onset and 1 from it to the end of its segment", () => {
    const path = join(dir, 'segments-onset.jsonl');
    writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const out = trainPy('from data import load_conversations\nfrom losses import onset_targets', [
      `convs = sorted([c for c in load_conversations(${JSON.stringify(path)}) if c["id"] in ("onset-own-line", "one-turn")], key=lambda c: c["id"] != "onset-own-line")`,
      'target, mask = onset_targets(convs, 8)',
      'print(json.dumps({"target": target.tolist(), "mask": mask.tolist(), "lengths": [len(s[1]) for c in convs for s in c["segments"]]}))',
    ]) as { target: number[][]; mask: number[][]; lengths: number[] };
    const onset = rows.find((x) => x.conv === 'onset-own-line')?.onset_piece as number;
    const segments = rows.filter((x) => x.conv === 'onset-own-line').length;
    let start = 0;
    for (let s = 0; s < segments; s++) {
      const n = out.lengths[s] as number;
      const expectedMask = start > onset ? 0 : 1;
      for (let t = 0; t < SEGMENT.max_turns; t++) {
        expect(out.mask[s]?.[t], `segment ${s} piece ${t}`).toBe(t < n ? expectedMask : 0);
        expect(out.target[s]?.[t], `segment ${s} piece ${t}`).toBe(t < n && start <= onset && start + t >= onset ? 1 : 0);
      }
      start += n;
    }
    // A benign chat gets no target here (the benign prefix loss covers it).
    expect(out.mask[segments]?.every((m) => m === 0)).toBe(true);
  });

  it.skipIf(!hasTorch)("renders a one-line flat view exactly as the server encodes the flattened chat, with the onset on the piece holding its first token", async () => {
    // An rng whose draws pick a flat view, here rendered as one line.
    const out = flatViews(rows, 1.0);
    const tokenizer = loadTokenizer(tokenizerPath);
    for (const r of records) {
      const served = await encodeConversation(tokenizer, { conversation: flatten(r.conversation) }, SEGMENT);
      const view = out[r.id];
      expect(view?.flat).toBe(true);
      expect(view?.segments.map(([ids]) => ids)).toEqual(served.segments.map((s) => s.inputIds));
      expect(view?.segments.map(([, spk]) => spk)).toEqual(served.segments.map((s) => s.speakerIds));
    }
    // The onset's line starts after the tokens of everything before it, flattened.
    const own = onsetRecords[0] as LabeledConversation;
    const before = await encodeConversation(tokenizer, { conversation: flatten(own.conversation.split('\n').slice(0, 14).join('\n')) }, SEGMENT);
    const tokensBefore = before.segments.flatMap((s) => s.inputIds).reduce((n, ids) => n + ids.length, 0);
    expect(out[own.id]?.onset).toBe(Math.floor(tokensBefore / SEGMENT.max_tokens_per_flat_piece));
    expect(out['one-turn']?.onset).toBe(-1);
  });

  it.skipIf(!hasTorch)('renders a flat view that kept its line breaks exactly as the server encodes each message on a line of its own', async () => {
    // Flat, but not one line (rate 0): each message becomes unknown-speaker pieces of the flat length.
    const out = flatViews(rows, 0.0);
    const tokenizer = loadTokenizer(tokenizerPath);
    // One message per line; a message's own line breaks become spaces, which tokenize alike. A line
    // that then reads as `name: text` would not be flat, so such records are left out.
    const rendered = records
      .map((r) => ({ r, lines: parseTurns(r.conversation).map((t) => t.text.replace(/\s*\n\s*/g, ' ')).join('\n') }))
      .filter(({ lines }) => parseTurns(lines).every((t) => t.speaker === 'unknown'));
    expect(rendered.length).toBeGreaterThanOrEqual(records.length - 1);
    for (const { r, lines } of rendered) {
      const served = await encodeConversation(tokenizer, { conversation: lines }, SEGMENT);
      expect(out[r.id]?.segments.map(([ids]) => ids), r.id).toEqual(served.segments.map((s) => s.inputIds));
      expect(out[r.id]?.segments.map(([, spk]) => spk), r.id).toEqual(served.segments.map((s) => s.speakerIds));
    }
  });

  it.skipIf(!hasTorch)("renders a merged-runs view exactly as the server encodes the chat with each speaker's consecutive lines joined, the onset on the piece holding its first token", async () => {
    const out = mergedViews(rows);
    const tokenizer = loadTokenizer(tokenizerPath);
    const onsetPieceOf = (id: string) => rows.find((x) => x.conv === id)?.onset_piece as number;
    for (const r of records) {
      const served = await encodeConversation(tokenizer, { conversation: mergeSpeakerRuns(toRequest(r).conversation) }, SEGMENT);
      const view = out[r.id];
      expect(view?.flat, r.id).toBe(!served.speakersKnown);
      expect(view?.segments.map(([ids]) => ids), r.id).toEqual(served.segments.map((s) => s.inputIds));
      expect(view?.segments.map(([, spk]) => spk), r.id).toEqual(served.segments.map((s) => s.speakerIds));
    }
    // Some record has a burst to merge, or this would only check the speakers view again.
    const pieceCount = (segs: Array<[number[][], number[]]> | undefined) => (segs ?? []).reduce((n, [ids]) => n + ids.length, 0);
    expect(records.some((r) => pieceCount(out[r.id]?.segments) < rows.filter((x) => x.conv === r.id).reduce((n, x) => n + x.input_ids.length, 0))).toBe(true);
    // kit's line 13 and kit's turn holding the onset (lines 14 and 15) join into one turn: the onset is
    // the served piece holding the onset's first token, inside that turn.
    const cont = onsetRecords[1] as LabeledConversation;
    const served = async (text: string) => (await encodeConversation(tokenizer, { conversation: text }, SEGMENT)).segments.flatMap((s) => s.inputIds);
    const onsetToken = (await served(cont.conversation.split('\n').slice(0, 14).join('\n'))).reduce((n, ids) => n + ids.length, 0);
    let seen = 0;
    const holding = (await served(mergeSpeakerRuns(toRequest(cont).conversation))).findIndex((ids) => (seen += ids.length) > onsetToken);
    expect(holding).toBeGreaterThan(0);
    expect(out[cont.id]?.onset).toBe(holding);
    expect(out[cont.id]?.onset).toBeLessThan(onsetPieceOf(cont.id));
    expect(out['one-turn']?.onset).toBe(-1);
  });
});

describe('model package: the contract version follows how flat text was cut', () => {
  const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/contract-model/manifest.json'), 'utf8')) as Record<string, unknown>;
  it.each([
    [{ max_turns: 64, max_tokens_per_turn: 32, max_tokens_per_flat_piece: 32 }, 3, { max_turns: 64, max_tokens_per_turn: 32 }],
    [{ max_turns: 64, max_tokens_per_turn: 32 }, 3, { max_turns: 64, max_tokens_per_turn: 32 }],
    [{ max_turns: 64, max_tokens_per_turn: 32, max_tokens_per_flat_piece: 8 }, 4, { max_turns: 64, max_tokens_per_turn: 32, max_tokens_per_flat_piece: 8 }],
  ])('segment %j is written as contract %i, which the server accepts', (segment, version, written) => {
    const c = contractOf(segment);
    expect(c).toEqual({ contract_version: version, segment: written });
    expect(validateManifest({ ...fixture, ...c }).segment).toEqual(written);
  });
});
