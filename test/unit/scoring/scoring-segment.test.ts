import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from 'tokenizers';
import { describe, expect, it } from 'vitest';
import { encodeConversation, loadTokenizer, pieceTokens, toModelInputs } from '../../../src/scoring/encode.ts';
import { segmentPieces, segmentSizes, toPieces } from '../../../src/scoring/segment.ts';

const FIXTURE = join(import.meta.dirname, '../../fixtures/contract-model');

describe('pieces: a turn longer than max_tokens_per_turn is cut into consecutive pieces', () => {
  it('cuts 7 tokens at max 3 into 3 + 3 + 1 keeping the speaker', () => {
    expect(toPieces([{ speakerId: 2, ids: [1, 2, 3, 4, 5, 6, 7] }], () => 3)).toEqual([
      { speakerId: 2, ids: [1, 2, 3] },
      { speakerId: 2, ids: [4, 5, 6] },
      { speakerId: 2, ids: [7] },
    ]);
  });
  it('keeps a turn of exactly max tokens whole and drops a turn with no tokens', () => {
    expect(toPieces([{ speakerId: 1, ids: [5, 6, 7] }, { speakerId: 2, ids: [] }], () => 3)).toEqual([{ speakerId: 1, ids: [5, 6, 7] }]);
  });
});

describe('pieces of flat text: contract 4 cuts unknown-speaker turns at max_tokens_per_flat_piece', () => {
  const v4 = { max_turns: 64, max_tokens_per_turn: 32, max_tokens_per_flat_piece: 8 };
  it('cuts turns of the unknown speaker (3) at the flat piece length and every other turn at max_tokens_per_turn', () => {
    const size = pieceTokens(v4);
    expect([size(1), size(2), size(3)]).toEqual([32, 32, 8]);
  });
  it('cuts flat text like any turn under contract 3, which names no flat piece length', () => {
    const size = pieceTokens({ max_turns: 64, max_tokens_per_turn: 32 });
    expect([size(1), size(3)]).toEqual([32, 32]);
  });
});

describe('segments: full segments of max_turns pieces, then the rest', () => {
  it.each([
    [0, 64, [0]],
    [1, 64, [1]],
    [64, 64, [64]],
    [65, 64, [64, 1]],
    [128, 64, [64, 64]],
    [129, 64, [64, 64, 1]],
    [130, 64, [64, 64, 2]],
    [10, 3, [3, 3, 3, 1]],
  ])('%i pieces at max %i turns -> %j', (p, m, sizes) => {
    expect(segmentSizes(p, m)).toEqual(sizes);
  });
  it('breaks only between pieces, in order, and segments every prefix as the whole up to its last piece', () => {
    const whole = segmentPieces(Array.from({ length: 300 }, (_, i) => i), 16);
    for (let p = 1; p < 300; p += 7) {
      const pieces = Array.from({ length: p }, (_, i) => i);
      const segs = segmentPieces(pieces, 16);
      expect(segs.flat()).toEqual(pieces);
      expect(segs.slice(0, -1)).toEqual(whole.slice(0, segs.length - 1));
      expect(segs.at(-1)).toEqual(whole[segs.length - 1]!.slice(0, segs.at(-1)!.length));
    }
  });
});

describe('encodeConversation: the shared encoder', () => {
  const tokenizer = loadTokenizer(join(FIXTURE, 'tokenizer.json'));

  it('encodes each turn without special tokens and tags pieces with speaker ids 1 and 2', async () => {
    const enc = await encodeConversation(tokenizer, { conversation: 'bob: hi\nalice: hello friend' }, { max_turns: 64, max_tokens_per_turn: 32 });
    expect(enc.segments).toHaveLength(1);
    const seg = enc.segments[0]!;
    expect(seg.speakerIds).toEqual([1, 2]);
    expect(seg.inputIds[0]).toEqual([tokenizer.tokenToId('hi')]);
    expect(seg.inputIds[1]).toEqual([tokenizer.tokenToId('hello'), tokenizer.tokenToId('friend')]);
    expect(enc.usedAgeFeatures).toBe(false);
    expect(enc.ageFeatures).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('tags the lines of flat text (no speaker prefix anywhere) with speaker id 3 and marks the speakers unknown', async () => {
    const enc = await encodeConversation(tokenizer, { conversation: 'hi\nhello friend' }, { max_turns: 64, max_tokens_per_turn: 32 });
    expect(enc.segments[0]!.speakerIds).toEqual([3, 3]);
    expect(enc.segments[0]!.inputIds[1]).toEqual([tokenizer.tokenToId('hello'), tokenizer.tokenToId('friend')]);
    expect(enc.speakersKnown).toBe(false);
    const prefixed = await encodeConversation(tokenizer, { conversation: 'hi\nuser2: hello' }, { max_turns: 64, max_tokens_per_turn: 32 });
    expect(prefixed.segments[0]!.speakerIds).toEqual([1, 2]);
    expect(prefixed.speakersKnown).toBe(true);
  });

  it('carries the same age vector for every segment and marks ages used', async () => {
    const enc = await encodeConversation(tokenizer, { conversation: 'user1: hi', age_a: '13', age_b: 'adult' }, { max_turns: 64, max_tokens_per_turn: 32 });
    expect(enc.ageFeatures).toEqual([1, 1, 0.13, 0.13, 1, 0, 0.18, 0.8]);
    expect(enc.usedAgeFeatures).toBe(true);
  });

  it('splits long turns into pieces and many pieces into fixed-size segments', async () => {
    const long = Array.from({ length: 10 }, () => 'hello').join(' ');
    const conversation = Array.from({ length: 9 }, (_, i) => `user${(i % 2) + 1}: ${long}`).join('\n');
    const enc = await encodeConversation(tokenizer, { conversation }, { max_turns: 4, max_tokens_per_turn: 4 });
    // 9 turns x 10 tokens at 4 per piece = 27 pieces: 6 segments of 4, then 3.
    expect(enc.segments.map((s) => s.inputIds.length)).toEqual([4, 4, 4, 4, 4, 4, 3]);
    expect(enc.segments.flatMap((s) => s.inputIds).every((ids) => ids.length <= 4 && ids.length > 0)).toBe(true);
  });

  it('cuts a one-line flat export into pieces of max_tokens_per_flat_piece, about one chat message each', async () => {
    const words = 'hey how was school today did you play the game with your friends and what about tomorrow tonight'.split(' ');
    const ids = words.map((w) => tokenizer.tokenToId(w));
    const enc = await encodeConversation(tokenizer, { conversation: words.join(' ') }, { max_turns: 64, max_tokens_per_turn: 32, max_tokens_per_flat_piece: 8 });
    expect(enc.segments[0]!.inputIds).toEqual([ids.slice(0, 8), ids.slice(8, 16), ids.slice(16)]);
    expect(enc.segments[0]!.speakerIds).toEqual([3, 3, 3]);
    // The same words with a speaker stay one piece: a prefixed line is one message.
    const sided = await encodeConversation(tokenizer, { conversation: `user1: ${words.join(' ')}` }, { max_turns: 64, max_tokens_per_turn: 32, max_tokens_per_flat_piece: 8 });
    expect(sided.segments[0]!.inputIds).toEqual([ids]);
  });

  it('locates explained flat turns by the same cut, so each turn ends at its last piece', async () => {
    const line = 'hey how was school today did you play the game with your friends';
    const enc = await encodeConversation(
      tokenizer,
      { conversation: `${line}\nok`, explain: true },
      { max_turns: 64, max_tokens_per_turn: 32, max_tokens_per_flat_piece: 8 },
    );
    expect(enc.turns?.map((t) => t.lastPiece)).toEqual([1, 2]);
    expect(enc.segments[0]!.inputIds).toHaveLength(3);
  });

  it('never puts the padding id 0 inside a real turn, even for a literal [PAD] in the text', async () => {
    const enc = await encodeConversation(tokenizer, { conversation: 'user1: [PAD] hi' }, { max_turns: 64, max_tokens_per_turn: 32 });
    expect(enc.segments.flatMap((s) => s.inputIds).flat()).not.toContain(0);
  });

  it('encodes a conversation with no tokens as one segment of one unknown-token piece', async () => {
    const enc = await encodeConversation(tokenizer, { conversation: '   \n ' }, { max_turns: 64, max_tokens_per_turn: 32 });
    expect(enc.segments).toEqual([{ inputIds: [[tokenizer.tokenToId('[UNK]')]], speakerIds: [1] }]);
  });

  it('ignores truncation and padding configured in tokenizer.json: long turns become pieces, not cut', async () => {
    const json = JSON.parse(readFileSync(join(FIXTURE, 'tokenizer.json'), 'utf8'));
    json.truncation = { direction: 'Right', max_length: 4, strategy: 'LongestFirst', stride: 0 };
    json.padding = { strategy: { Fixed: 16 }, direction: 'Right', pad_to_multiple_of: null, pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' };
    const truncating = Tokenizer.fromString(JSON.stringify(json));
    const enc = await encodeConversation(truncating, { conversation: 'user1: hello there my good friend how are you today' }, { max_turns: 64, max_tokens_per_turn: 32 });
    expect(enc.segments[0]!.inputIds).toEqual([[...'hello there my good friend how are you today'.split(' ').map((w) => tokenizer.tokenToId(w))]]);
  });

  it('toModelInputs right-pads to the longest segment and piece in the batch', () => {
    const inputs = toModelInputs([
      { segment: { inputIds: [[5, 6, 7], [8]], speakerIds: [1, 2] }, ageFeatures: [1, 1, 0.1, 0.1, 0, 0, 0, 0] },
      { segment: { inputIds: [[9]], speakerIds: [2] }, ageFeatures: [0, 0, 0, 0, 0, 0, 0, 0] },
    ]);
    expect(inputs.dims).toEqual({ batch: 2, turns: 2, tokens: 3 });
    expect(Array.from(inputs.input_ids, Number)).toEqual([5, 6, 7, 8, 0, 0, 9, 0, 0, 0, 0, 0]);
    expect(Array.from(inputs.speaker_ids, Number)).toEqual([1, 2, 2, 0]);
    expect(Array.from(inputs.age_features)).toEqual([1, 1, Math.fround(0.1), Math.fround(0.1), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });
});
