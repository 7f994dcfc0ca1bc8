// The training-data export and the server must feed the model identical tensors for the same
// conversation: both run src/scoring/encode.ts, and Python's padding must equal toModelInputs.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildFromCorpus } from '../../scripts/data/build-tokenizer.ts';
import { exportSegments, toRequest, type SegmentRow } from '../../scripts/data/export.ts';
import { generate } from '../../scripts/data/generate.ts';
import type { LabeledConversation } from '../../scripts/data/record.ts';
import { encodeConversation, loadTokenizer, toModelInputs } from '../../src/scoring/encode.ts';

const PY = process.env.PYTHON ?? '/usr/bin/python3';
const hasTorch = spawnSync(PY, ['-c', 'import torch, numpy'], { stdio: 'ignore' }).status === 0;
// Small shapes so that pieces and several segments occur in short conversations.
const SEGMENT = { max_turns: 8, max_tokens_per_turn: 6 };

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
    records = [...corpus.filter((r) => r.conversation.split('\n').length > 20).slice(0, 3), ...extra];
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
    const script = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(join(process.cwd(), 'scripts/train'))})`,
      'from train import load_conversations, collate',
      `convs = load_conversations(${JSON.stringify(path)})`,
      'ids, spk, ages, owner = collate(convs)',
      'print(json.dumps({"ids": ids.flatten().tolist(), "spk": spk.flatten().tolist(), "ages": ages.flatten().tolist(), "shape": list(ids.shape)}))',
    ].join('\n');
    const out = JSON.parse(execFileSync(PY, ['-c', script], { encoding: 'utf8', maxBuffer: 64 << 20 })) as {
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
});
