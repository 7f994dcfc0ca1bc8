// The shared encoder: text -> tensors, used by the server's workers AND by the training-data export,
// so a model sees identical tensors in training and in service (docs/model-contract.md).
import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { Tokenizer } from 'tokenizers';
import { FastWordPiece, LEARN_PER_CALL, type NativeSteps } from './wordpiece.ts';
import { parseTurns } from './conversation.ts';
import { ageFeatures, usedAgeFeatures } from './ages.ts';
import { pieceCount, segmentPieces, toPieces, type Piece } from './segment.ts';
import type { ModelManifest, ParsedTurn, ScoreRequest, TurnSpeaker } from './types.ts';

/** Loads a tokenizer.json file (the fast path is set up from the same text). */
export function loadTokenizer(path: string): Tokenizer {
  return tokenizerFromJson(readFileSync(path, 'utf8'));
}

/** Builds a tokenizer from tokenizer.json text, as Tokenizer.fromString does, plus its fast path. */
export function tokenizerFromJson(json: string): Tokenizer {
  const tokenizer = prepare(Tokenizer.fromString(json));
  const fast = FastWordPiece.fromJson(json, nativeSteps(tokenizer));
  if (fast !== undefined) fastPaths.set(tokenizer, verify(tokenizer, fast));
  return tokenizer;
}

/** The tokenizer's own normaliser and pre-tokenizer, from which the fast path learns non-ASCII characters. */
export function nativeSteps(tokenizer: Tokenizer): NativeSteps | undefined {
  const normalizer = tokenizer.getNormalizer();
  const preTokenizer = tokenizer.getPreTokenizer();
  if (normalizer === null || preTokenizer === null) return undefined;
  return {
    normalize: (text) => normalizer.normalizeString(text),
    preTokenize: (text) => preTokenizer.preTokenizeString(text).map(([word]) => word),
  };
}

/** One segment: its pieces' token ids (unpadded) and their speaker ids (1 = user1, 2 = user2, 3 = unknown). */
export interface EncodedSegment {
  inputIds: number[][];
  speakerIds: number[];
}

export interface EncodedConversation {
  segments: EncodedSegment[];
  ageFeatures: number[];
  usedAgeFeatures: boolean;
  /** False for flat text (no speaker prefix anywhere): no side can be named. */
  speakersKnown: boolean;
  /** Only when the request asks to explain: each parsed turn and where it ends among the pieces. */
  turns?: EncodedTurn[];
}

/** A parsed turn located in the piece sequence, so its running score can be read from one pass. */
export interface EncodedTurn {
  line: number;
  speaker: TurnSpeaker;
  /**
   * Index (over the whole conversation) of the last piece at or before the end of this turn; -1 while
   * no turn so far yielded a token. The conversation cut after this turn is exactly pieces 0..lastPiece.
   */
  lastPiece: number;
}

/** Speaker ids of contract version 2: 0 is a padding turn. */
export const SPEAKER_IDS = { user1: 1, user2: 2, unknown: 3 } as const;

const PAD_ID = 0;
const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * Most tokens per piece for a speaker. A flat export runs many messages together in one line, so
 * contract 4 cuts unknown-speaker turns into pieces about one chat message long; turns with a speaker
 * are single messages and keep `max_tokens_per_turn`.
 */
export function pieceTokens(segment: ModelManifest['segment']): (speakerId: number) => number {
  const flat = segment.max_tokens_per_flat_piece ?? segment.max_tokens_per_turn;
  return (speakerId) => (speakerId === SPEAKER_IDS.unknown ? flat : segment.max_tokens_per_turn);
}

/** The id used when a conversation yields no tokens at all: the tokenizer's unknown token. */
function emptyConversationId(tokenizer: Tokenizer): number {
  const unk = tokenizer.tokenToId('[UNK]') ?? tokenizer.tokenToId('<unk>');
  return unk !== null && unk !== undefined && unk !== PAD_ID ? unk : 1;
}

function emptyPiece(tokenizer: Tokenizer): Piece {
  return { speakerId: SPEAKER_IDS.user1, ids: [emptyConversationId(tokenizer)] };
}

/** The one segment of a conversation that yields no tokens: what an explanation's start is scored on. */
export function emptyConversationSegment(tokenizer: Tokenizer): EncodedSegment {
  const piece = emptyPiece(tokenizer);
  return { inputIds: [piece.ids], speakerIds: [piece.speakerId] };
}

const prepared = new WeakSet<Tokenizer>();

/** Turns are cut into pieces by the contract, never truncated by the tokenizer, and padded only by toModelInputs. */
function prepare(tokenizer: Tokenizer): Tokenizer {
  if (!prepared.has(tokenizer)) {
    tokenizer.disableTruncation();
    tokenizer.disablePadding();
    prepared.add(tokenizer);
  }
  return tokenizer;
}

async function encodeNative(tokenizer: Tokenizer, texts: string[]): Promise<number[][]> {
  if (texts.length === 0) return [];
  const encodings = await prepare(tokenizer).encodeBatch(texts, { addSpecialTokens: false });
  return encodings.map((e) => e.getIds());
}

const fastPaths = new WeakMap<Tokenizer, Promise<FastWordPiece | undefined>>();

/** Texts on which the fast path must reproduce the native ids before it is trusted. */
const PROBES = [
  'Hello there, how are you? I\'m FINE!!',
  '  leading\tand trailing \r\n spaces  ',
  "it's 12:30 -- see http://example.com/a?b=c&d=[e]{f}~`^|\\",
  'control\u0001chars\u0000and\u007fdel\u000bvt\u000cff',
  'UPPER lower MiXeD ##hash [PAD] [UNK] [CLS] <unk>',
  'it\u2019s \u201cquoted\u201d \u2018so\u2019 \u2013 and \u2014 wait\u2026',
  'H\u00e9llo W\u00d6RLD, \u00e7a va? na\u00efve cafe\u0301 \u00bfqu\u00e9? \u00a1s\u00ed! stra\u00dfe \u01c4',
  '\u03a3\u039f\u03a6\u0399\u0391 \u0130stanbul \u041f\u0440\u0438\u0432\u0435\u0442 \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627',
  'lol\ud83d\ude02\ud83d\ude02 hi\ud83e\udd7a \u2764\ufe0f \ud83d\udc4d\ud83c\udffd \ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67',
  '\u4e2d\u6587\u5b57 \u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4 \uff21\uff22 \u2460',
  'nbsp\u00a0here\u2003em\u200bzw\ufeffbom\u2028ls \ufffd\u00ad',
  'half an emoji \ud83d cut\ud83d and \ude02 a lone low half',
  'supercalifragilisticexpialidocious antidisestablishmentarianism xqzjv',
  'x'.repeat(101) + ' ' + 'y'.repeat(100),
  // 100 characters in 101 UTF-16 units: the word limit counts characters.
  'x'.repeat(99) + '\ud83d\ude02',
  '',
];

/**
 * Trusts the fast path only if every probe it accepts gives the native ids (and it accepts some). Never
 * rejects: a binding that fails here leaves every text to the binding itself, as before the fast path.
 */
async function verify(tokenizer: Tokenizer, fast: FastWordPiece): Promise<FastWordPiece | undefined> {
  try {
    const native = await encodeNative(tokenizer, PROBES);
    const budget = { left: LEARN_PER_CALL };
    let accepted = 0;
    for (let i = 0; i < PROBES.length; i++) {
      const ids = fast.encode(PROBES[i] as string, budget);
      if (ids === undefined) continue;
      accepted++;
      const expected = native[i] as number[];
      if (ids.length !== expected.length || ids.some((id, k) => id !== expected[k])) return undefined;
    }
    return accepted > 0 ? fast : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `tokenizer` encodes text through the verified fast path (for tests and diagnostics). */
export async function usesFastPath(tokenizer: Tokenizer): Promise<boolean> {
  return (await fastPaths.get(tokenizer)) !== undefined;
}

/**
 * Token ids of each text, without special tokens. Texts take the verified fast path when the tokenizer
 * has one; those it declines go to the native tokenizer in one encodeBatch call.
 */
export async function encodeTexts(tokenizer: Tokenizer, texts: string[]): Promise<number[][]> {
  const fast = await fastPaths.get(tokenizer);
  if (fast === undefined) return encodeNative(tokenizer, texts);
  const out = new Array<number[]>(texts.length);
  const rest: number[] = [];
  // One budget for the call: a conversation of many turns, each full of new characters, learns no more
  // than one turn could.
  const budget = { left: LEARN_PER_CALL };
  for (let i = 0; i < texts.length; i++) {
    const ids = fast.encode(texts[i] as string, budget);
    if (ids === undefined) rest.push(i);
    else out[i] = ids;
  }
  if (rest.length > 0) {
    const native = await encodeNative(
      tokenizer,
      rest.map((i) => texts[i] as string),
    );
    rest.forEach((i, k) => (out[i] = native[k] as number[]));
  }
  return out;
}

export async function encodeConversation(
  tokenizer: Tokenizer,
  request: ScoreRequest,
  segment: ModelManifest['segment'],
): Promise<EncodedConversation> {
  const features = ageFeatures(request.age_a, request.age_b);
  const turns = parseTurns(request.conversation);
  const ids = await encodeTexts(
    tokenizer,
    turns.map((t) => t.text),
  );
  const turnIds: Array<{ speakerId: number; ids: number[] }> = new Array(turns.length);
  for (let i = 0; i < turns.length; i++) {
    let t = ids[i] as number[];
    // Id 0 is padding: a literal "[PAD]" in the text must not look like padding to the model.
    if (t.includes(PAD_ID)) t = t.filter((id) => id !== PAD_ID);
    turnIds[i] = { speakerId: SPEAKER_IDS[(turns[i] as ParsedTurn).speaker], ids: t };
  }
  const maxTokens = pieceTokens(segment);
  let located: EncodedTurn[] | undefined;
  if (request.explain === true) {
    located = new Array<EncodedTurn>(turns.length);
    let piecesSoFar = 0;
    for (let i = 0; i < turns.length; i++) {
      const t = turnIds[i] as { speakerId: number; ids: number[] };
      piecesSoFar += pieceCount(t.ids.length, maxTokens(t.speakerId));
      const parsed = turns[i] as ParsedTurn;
      located[i] = { line: parsed.line, speaker: parsed.speaker, lastPiece: piecesSoFar - 1 };
    }
  }
  let pieces: Piece[] = toPieces(turnIds, maxTokens);
  if (pieces.length === 0) {
    // Nothing tokenizable (e.g. only whitespace): one user1 piece of the unknown token, never an empty segment.
    pieces = [emptyPiece(tokenizer)];
  }
  const segments = segmentPieces(pieces, segment.max_turns).map((seg) => ({
    inputIds: seg.map((p) => p.ids),
    speakerIds: seg.map((p) => p.speakerId),
  }));
  const encoded: EncodedConversation = {
    segments,
    ageFeatures: features,
    usedAgeFeatures: usedAgeFeatures(request.age_a, request.age_b),
    speakersKnown: turns.some((t) => t.speaker !== 'unknown'),
  };
  if (located !== undefined) encoded.turns = located;
  return encoded;
}

export interface ModelInputs {
  input_ids: BigInt64Array;
  speaker_ids: BigInt64Array;
  age_features: Float32Array;
  dims: { batch: number; turns: number; tokens: number };
}

/** Pads a batch of segments to its longest segment and longest piece (right padding with 0). */
export function toModelInputs(items: ReadonlyArray<{ segment: EncodedSegment; ageFeatures: readonly number[] }>): ModelInputs {
  const batch = items.length;
  let turns = 1;
  let tokens = 1;
  for (const { segment } of items) {
    if (segment.inputIds.length > turns) turns = segment.inputIds.length;
    for (const ids of segment.inputIds) if (ids.length > tokens) tokens = ids.length;
  }
  const inputIds = new BigInt64Array(batch * turns * tokens);
  const speakerIds = new BigInt64Array(batch * turns);
  const ages = new Float32Array(batch * 8);
  // Ids are small non-negative integers: on a little-endian machine, writing the low 32 bits through an
  // Int32Array view fills the int64 tensor without creating a BigInt per token.
  const low = LITTLE_ENDIAN ? new Int32Array(inputIds.buffer) : undefined;
  for (let b = 0; b < batch; b++) {
    const { segment, ageFeatures: feats } = items[b] as { segment: EncodedSegment; ageFeatures: readonly number[] };
    for (let t = 0; t < segment.inputIds.length; t++) {
      const ids = segment.inputIds[t] as number[];
      const base = (b * turns + t) * tokens;
      if (low !== undefined) for (let k = 0; k < ids.length; k++) low[(base + k) * 2] = ids[k] as number;
      else for (let k = 0; k < ids.length; k++) inputIds[base + k] = BigInt(ids[k] as number);
      speakerIds[b * turns + t] = BigInt(segment.speakerIds[t] as number);
    }
    for (let f = 0; f < 8; f++) ages[b * 8 + f] = feats[f] ?? 0;
  }
  return { input_ids: inputIds, speaker_ids: speakerIds, age_features: ages, dims: { batch, turns, tokens } };
}
