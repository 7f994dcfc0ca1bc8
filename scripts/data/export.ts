// Turns a corpus into model tensors with the server's own encoder (src/scoring/encode.ts), so
// training sees exactly the tensors the service feeds the model. One JSONL line per segment:
//   {conv, seg, split, label, predator, family, source, has_ages, onset_piece, input_ids, speaker_ids, age_features[, side_ages]}
//
//   node scripts/data/export.ts --corpus .tmp/data/corpus.jsonl --tokenizer tok.json --out segments.jsonl

import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { encodeConversation, loadTokenizer, type EncodedTurn } from '../../src/scoring/encode.ts';
import type { ModelManifest, ScoreRequest } from '../../src/scoring/types.ts';
import SEGMENT from './segment.json' with { type: 'json' };
import { parseJsonl, type LabeledConversation } from './record.ts';

/**
 * The segment shape the shipped model is trained for (docs/model-contract.md, manifest `segment`), in
 * segment.json, which the Python trainer reads too (scripts/train/data.py), so both cut alike.
 * Flat text is cut into message-sized pieces (contract 4, since 3.3.0); `--max-flat-tokens 32` cuts it
 * like any turn, as contract 3 did (docs/training.md, "Model 3.3.0").
 */
export const DEFAULT_SEGMENT: ModelManifest['segment'] = SEGMENT;

/** The command-line flags that set the segment shape (export.ts and package.ts take the same ones). */
export const SEGMENT_FLAGS = {
  'max-turns': { type: 'string', default: String(DEFAULT_SEGMENT.max_turns) },
  'max-tokens': { type: 'string', default: String(DEFAULT_SEGMENT.max_tokens_per_turn) },
  'max-flat-tokens': { type: 'string', default: String(DEFAULT_SEGMENT.max_tokens_per_flat_piece) },
} as const;

/** The segment shape those flags give. */
export function segmentFromFlags(values: { 'max-turns': string; 'max-tokens': string; 'max-flat-tokens': string }): ModelManifest['segment'] {
  return {
    max_turns: Number(values['max-turns']),
    max_tokens_per_turn: Number(values['max-tokens']),
    max_tokens_per_flat_piece: Number(values['max-flat-tokens']),
  };
}

export interface SegmentRow {
  conv: string;
  seg: number;
  split: string;
  label: number;
  predator: string;
  family: string;
  source: string;
  has_ages: boolean;
  /** Index over the conversation's pieces of the first piece of the turn where the harm starts; -1 when unknown. */
  onset_piece: number;
  input_ids: number[][];
  speaker_ids: number[];
  age_features: number[];
  /** user1's and user2's true ages, where the corpus kept them (corpus.ts --side-ages): the side-age loss's target. */
  side_ages?: [number, number];
}

export function toRequest(r: LabeledConversation): ScoreRequest {
  const req: ScoreRequest = { conversation: r.conversation };
  if (r.age_a !== undefined) req.age_a = r.age_a;
  if (r.age_b !== undefined) req.age_b = r.age_b;
  return req;
}

/** The turn holding `line`: the last turn starting at or before it (continuation lines belong to it). */
export function turnOfLine(turnLines: readonly number[], line: number): number | undefined {
  let turn: number | undefined;
  for (let i = 0; i < turnLines.length && (turnLines[i] as number) <= line; i++) turn = i;
  return turn;
}

/**
 * The first piece of the turn holding `onsetLine`, from the encoder's turn map; -1 when that turn has
 * no piece of its own.
 */
export function onsetPiece(turns: readonly EncodedTurn[], onsetLine: number): number {
  const i = turnOfLine(turns.map((t) => t.line), onsetLine);
  if (i === undefined) return -1;
  const previousLast = i === 0 ? -1 : (turns[i - 1] as EncodedTurn).lastPiece;
  const t = turns[i] as EncodedTurn;
  return t.lastPiece > previousLast ? previousLast + 1 : -1;
}

export async function exportSegments(
  records: LabeledConversation[],
  tokenizerPath: string,
  segment: ModelManifest['segment'],
  write: (row: SegmentRow) => void | Promise<void>,
): Promise<void> {
  const tokenizer = loadTokenizer(tokenizerPath);
  const chunk = 64;
  for (let i = 0; i < records.length; i += chunk) {
    const batch = records.slice(i, i + chunk);
    // The turn map (explain) only where an onset is known; it changes no tensor.
    const encoded = await Promise.all(batch.map((r) => encodeConversation(tokenizer, { ...toRequest(r), explain: r.onset_line !== undefined }, segment)));
    for (let k = 0; k < batch.length; k++) {
      const r = batch[k] as LabeledConversation;
      const enc = encoded[k]!;
      const onset = r.onset_line !== undefined && enc.turns !== undefined ? onsetPiece(enc.turns, r.onset_line) : -1;
      for (let s = 0; s < enc.segments.length; s++) {
        const seg = enc.segments[s]!;
        await write({
          conv: r.id,
          seg: s,
          split: r.split,
          label: r.label,
          predator: r.predator,
          family: r.family,
          source: r.source,
          has_ages: enc.usedAgeFeatures,
          onset_piece: onset,
          input_ids: seg.inputIds,
          speaker_ids: seg.speakerIds,
          age_features: enc.ageFeatures,
          ...(r.side_ages !== undefined ? { side_ages: r.side_ages } : {}),
        });
      }
    }
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string' },
      tokenizer: { type: 'string' },
      out: { type: 'string' },
      ...SEGMENT_FLAGS,
    },
  });
  if (!values.corpus || !values.tokenizer || !values.out) throw new Error('usage: export.ts --corpus c.jsonl --tokenizer t.json --out s.jsonl');
  const records = parseJsonl<LabeledConversation>(readFileSync(values.corpus, 'utf8'));
  mkdirSync(dirname(values.out), { recursive: true });
  const out = createWriteStream(values.out);
  let rows = 0;
  const segment = segmentFromFlags(values);
  const flat = segment.max_tokens_per_flat_piece as number;
  // Training's flat views cut each exported piece at the flat length; that cuts a turn exactly as the
  // server does only when the flat length divides the piece length.
  if (segment.max_tokens_per_turn % flat !== 0) {
    throw new Error(`--max-flat-tokens (${flat}) must divide --max-tokens (${segment.max_tokens_per_turn})`);
  }
  await exportSegments(records, values.tokenizer, segment, async (row) => {
    rows++;
    if (!out.write(JSON.stringify(row) + '\n')) await once(out, 'drain');
  });
  out.end();
  await once(out, 'finish');
  console.error(`export: ${records.length} conversations, ${rows} segments -> ${values.out}`);
}
