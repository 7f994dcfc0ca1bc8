import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { Tokenizer, WordPiece, bertNormalizer, bertPreTokenizer, whitespacePreTokenizer } from 'tokenizers';
import { describe, expect, it, vi } from 'vitest';
import { encodeTexts, loadTokenizer, nativeSteps, tokenizerFromJson, usesFastPath } from '../../../src/scoring/encode.ts';
import { FastWordPiece, LEARN_PER_CALL } from '../../../src/scoring/wordpiece.ts';

const FIXTURE_JSON = readFileSync(join(import.meta.dirname, '../../fixtures/contract-model/tokenizer.json'), 'utf8');
/** The shipped model's tokenizer: 53k pieces, emoji and typographic punctuation among them. */
const SHIPPED_JSON = readFileSync(join(import.meta.dirname, '../../../models/conversation-risk/tokenizer.json'), 'utf8');
const VOCAB: Record<string, number> = JSON.parse(FIXTURE_JSON).model.vocab;

/** A tokenizer.json built by the native binding, with the given normalizer flags and special tokens. */
function buildJson(options: { lowercase: boolean; cleanText: boolean; specials?: string[]; added?: string[]; wordPre?: boolean }): string {
  const t = new Tokenizer(WordPiece.init(VOCAB, { unkToken: '[UNK]' }));
  t.setNormalizer(bertNormalizer({ lowercase: options.lowercase, cleanText: options.cleanText }));
  t.setPreTokenizer(options.wordPre === true ? whitespacePreTokenizer() : bertPreTokenizer());
  if (options.specials !== undefined) t.addSpecialTokens(options.specials);
  // Tokens that are not special are matched in normalised text.
  if (options.added !== undefined) t.addTokens(options.added);
  const dir = mkdtempSync(join(tmpdir(), 'tokenizer-'));
  try {
    t.save(join(dir, 'tokenizer.json'));
    return readFileSync(join(dir, 'tokenizer.json'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const natives = new Map<string, Tokenizer>();

function nativeOf(json: string): Tokenizer {
  let native = natives.get(json);
  if (native === undefined) natives.set(json, (native = Tokenizer.fromString(json)));
  return native;
}

async function nativeIds(json: string, texts: string[]): Promise<number[][]> {
  const native = nativeOf(json);
  return (await native.encodeBatch(texts, { addSpecialTokens: false })).map((e) => e.getIds());
}

/** The fast path on its own, learning from a native tokenizer of the same file. */
function fastOf(json: string): FastWordPiece {
  const fast = FastWordPiece.fromJson(json, nativeSteps(nativeOf(json)));
  if (fast === undefined) throw new Error('no fast path for this tokenizer.json');
  return fast;
}

/** One character from the blocks chat text draws on, and from the awkward corners of Unicode. */
const anyChar = fc.oneof(
  ...[
    [0x00, 0x7f], // ASCII, controls included
    [0x80, 0x24f], // Latin-1 and Latin Extended: accents, ß, ǅ
    [0x300, 0x36f], // combining marks
    [0x370, 0x52f], // Greek (Σ) and Cyrillic
    [0x590, 0x6ff], // Hebrew and Arabic
    [0x900, 0x9ff], // Devanagari and Bengali: marks the normaliser keeps
    [0x2000, 0x206f], // general punctuation, odd spaces, zero-width characters
    [0x2100, 0x27bf], // symbols and dingbats (❤)
    [0x3000, 0x30ff], // CJK punctuation, kana
    [0x4e00, 0x4fff], // CJK ideographs
    [0xac00, 0xacff], // Hangul syllables (NFD splits them)
    [0xfe00, 0xfe0f], // variation selectors
    [0xff00, 0xffef], // full-width forms
    [0xd800, 0xdfff], // lone surrogate halves
    [0x1f300, 0x1faff], // emoji, newer ones included
    [0x10000, 0x10ffff], // anything beyond the first plane
  ].map(([min, max]) => fc.integer({ min: min as number, max: max as number }).map((c) => (c >= 0xd800 && c <= 0xdfff ? String.fromCharCode(c) : String.fromCodePoint(c)))),
);

/** Chat-like text: vocabulary words and fragments, upper case, punctuation, controls, any Unicode. */
function chatText(words: readonly string[]): fc.Arbitrary<string> {
  return fc
    .array(
      fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom(...words) },
        { weight: 2, arbitrary: fc.constantFrom(...words).map((w) => w.toUpperCase()) },
        { weight: 3, arbitrary: fc.constantFrom(' ', '  ', '\t', '\n', '\r\n') },
        { weight: 2, arbitrary: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)) },
        { weight: 3, arbitrary: anyChar },
        { weight: 1, arbitrary: fc.constantFrom('é', 'e\u0301', '中', '😀', '\u00a0', 'İ', 'Σ', '\u2019', '[PAD]', '[SEP]', 'x'.repeat(101), 'x'.repeat(99) + '😂') },
      ),
      { maxLength: 40 },
    )
    .map((parts) => parts.join(''));
}

describe('the fast WordPiece path gives exactly the native tokenizer ids', () => {
  it.each([
    ['lowercase, clean_text (the contract model)', () => buildJson({ lowercase: true, cleanText: true })],
    ['cased', () => buildJson({ lowercase: false, cleanText: true })],
    ['without clean_text', () => buildJson({ lowercase: true, cleanText: false })],
    ['with special added tokens', () => buildJson({ lowercase: true, cleanText: true, specials: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] })],
    ['the shipped tokenizer, whose pieces hold emoji and accented forms', () => SHIPPED_JSON],
  ])('%s', async (_name, build) => {
    const json = build();
    const words = Object.keys(JSON.parse(json).model.vocab as Record<string, number>).map((w) => w.replace(/^##/, ''));
    const tokenizer = tokenizerFromJson(json);
    expect(await usesFastPath(tokenizer)).toBe(true);
    const fast = fastOf(json);
    const texts = { seen: 0, taken: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(chatText(words), { minLength: 1, maxLength: 8 }), async (batch) => {
        expect(await encodeTexts(tokenizer, batch)).toEqual(await nativeIds(json, batch));
        texts.seen += batch.length;
        texts.taken += batch.filter((t) => fast.encode(t) !== undefined).length;
      }),
      { numRuns: 200 },
    );
    // Equal ids prove nothing about texts the fast path declines: most must be its own. (With added
    // tokens it declines any text that is not plain ASCII, about three in four of these.)
    expect(texts.taken / texts.seen).toBeGreaterThan(json.includes('"[MASK]"') ? 0.15 : 0.8);
  });

  it('every character of the first plane, and samples beyond, alone and inside words (the shipped tokenizer)', async () => {
    const fast = fastOf(SHIPPED_JSON);
    const texts: string[] = [];
    const chars = Array.from({ length: 0x10000 }, (_, cp) => String.fromCharCode(cp));
    for (const cp of [0x1f600, 0x1f97a, 0x1f3fd, 0x1faf8, 0xe0061, 0xf0000, 0x10ffff, 0x20000, 0x1d165]) chars.push(String.fromCodePoint(cp));
    for (const c of chars) texts.push(c, `Ab${c}Cd ${c}${c}.`);
    const expected = await nativeIds(SHIPPED_JSON, texts);
    let taken = 0;
    for (let i = 0; i < texts.length; i++) {
      const ids = fast.encode(texts[i] as string);
      if (ids === undefined) continue;
      taken++;
      if (ids.join() !== (expected[i] as number[]).join()) expect({ text: texts[i], ids }).toEqual({ text: texts[i], ids: expected[i] });
    }
    expect(taken / texts.length).toBeGreaterThan(0.99);
  });

  it('encodes accented, emoji and CJK text without calling the native encoder', async () => {
    const tokenizer = tokenizerFromJson(SHIPPED_JSON);
    expect(await usesFastPath(tokenizer)).toBe(true);
    const texts = ['the café near José’s place 😋', 'lol 😂😂 İstanbul ΣΟΦΙΑ 中文 👍🏽', 'half an emoji \ud83d cut'];
    const expected = await nativeIds(SHIPPED_JSON, texts);
    const native = vi.spyOn(tokenizer, 'encodeBatch');
    expect(await encodeTexts(tokenizer, texts)).toEqual(expected);
    expect(native).not.toHaveBeenCalled();
  });

  it('counts a word against max_input_chars_per_word in characters, not UTF-16 units', async () => {
    const tokenizer = tokenizerFromJson(SHIPPED_JSON);
    const unk = (JSON.parse(SHIPPED_JSON).model.vocab as Record<string, number>)['[UNK]'];
    const [fits, over] = await encodeTexts(tokenizer, ['x'.repeat(99) + '😂', 'x'.repeat(100) + '😂']);
    expect(fits).not.toContain(unk);
    expect(over).toEqual([unk]);
    expect([fits, over]).toEqual(await nativeIds(SHIPPED_JSON, ['x'.repeat(99) + '😂', 'x'.repeat(100) + '😂']));
  });

  it('leaves text with a character whose outcome depends on its neighbours to the native tokenizer', async () => {
    const fast = fastOf(FIXTURE_JSON);
    expect(fast.encode('hello')).toEqual([VOCAB.hello]);
    expect(fast.encode('héllo')).toEqual([VOCAB.hello]);
    // Musical stem marks are spacing marks of combining classes 216 and 226: strip_accents keeps them
    // and NFD puts them in class order, so 'a' + 1D16D + 1D165 comes out as 'a' + 1D165 + 1D16D.
    expect(fast.encode('a\u{1d16d}\u{1d165}')).toBeUndefined();
    // A spacing mark of class 0 (Devanagari visarga) is never reordered: it is the fast path's.
    expect(fast.encode('hello \u0903')).toEqual((await nativeIds(FIXTURE_JSON, ['hello \u0903']))[0]);
  });

  it('asks the native normaliser itself whether a character unknown to this Node reorders as a mark', () => {
    // A native library with newer Unicode tables than this Node's ICU: U+0378 (unassigned here) is a
    // mark of low combining class there, so NFD moves it before a class-216 mark; U+0379 is a letter.
    const fast = FastWordPiece.fromJson(FIXTURE_JSON, {
      normalize: (text) => text.replace(/\u{1d165}\u0378/gu, '\u0378\u{1d165}'),
      preTokenize: (text) => text.split(/\s+/).filter((w) => w !== ''),
    });
    expect(fast?.encode('a\u0378')).toBeUndefined();
    expect(fast?.encode('a\u0379')).toEqual([VOCAB['[UNK]']]);
  });

  it('learns at most LEARN_PER_CALL new characters in one call, over all its texts, and keeps what it learned', async () => {
    const ideographs = (k: number) => Array.from({ length: 600 }, (_, i) => String.fromCodePoint(0x20000 + k * 600 + i)).join('');
    const turns = [ideographs(0), ideographs(1), ideographs(2)];
    const tokenizer = tokenizerFromJson(SHIPPED_JSON);
    expect(await usesFastPath(tokenizer)).toBe(true);
    const native = vi.spyOn(tokenizer, 'encodeBatch');
    // 600 + 400 learned: the first turn is the fast path's, the second runs out, the third has nothing left.
    expect(await encodeTexts(tokenizer, turns)).toEqual(await nativeIds(SHIPPED_JSON, turns));
    expect(native.mock.calls.map(([texts]) => texts)).toEqual([[turns[1], turns[2]]]);
    // The next call learns the remaining 200 + 600 and needs the binding no more.
    native.mockClear();
    expect(await encodeTexts(tokenizer, turns)).toEqual(await nativeIds(SHIPPED_JSON, turns));
    expect(native).not.toHaveBeenCalled();
    expect(LEARN_PER_CALL).toBe(1_000);
  });

  it('declines, and does not throw, when the native steps fail on a character', () => {
    const fast = FastWordPiece.fromJson(FIXTURE_JSON, {
      normalize: () => {
        throw new Error('native failure');
      },
      preTokenize: () => [],
    });
    expect(fast?.encode('h\u00e9llo')).toBeUndefined();
    expect(fast?.encode('hello')).toEqual([VOCAB.hello]);
  });

  it('cannot be filled: after 20,000 characters of a private-use plane, a new emoji still takes the fast path', () => {
    const fast = fastOf(SHIPPED_JSON);
    for (let i = 0; i < 20; i++) fast.encode(Array.from({ length: 1_000 }, (_, k) => String.fromCodePoint(0xf0000 + i * 1_000 + k)).join(''));
    expect(fast.encode('hi \u{1f602}')).toBeDefined();
  });

  it('keeps no text alive through its word cache: each cached word is a copy, not a slice of the text', () => {
    // V8 keeps a sliced string's parent alive; a cached slice would pin its whole conversation.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const fast = FastWordPiece.fromJson(FIXTURE_JSON) as FastWordPiece;
    const body = 'hello there how are you '.repeat(12_500);
    gc();
    const before = process.memoryUsage().heapUsed;
    // 200 conversations of 300,000 ASCII characters, each with one word not seen before: 60 MB if pinned.
    for (let i = 0; i < 200; i++) fast.encode(`user1: ${body} uniquewordnumber${i}`.slice(7));
    gc();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(20e6);
  });

  it('takes only ASCII text when it cannot ask the native normaliser', () => {
    const fast = FastWordPiece.fromJson(FIXTURE_JSON);
    expect(fast?.encode('hello')).toEqual([VOCAB.hello]);
    expect(fast?.encode('héllo')).toBeUndefined();
    expect(fast?.encode('it\u2019s')).toBeUndefined();
  });

  it('leaves text containing an added token, and any non-ASCII text, to the native tokenizer when there are added tokens', () => {
    const fast = fastOf(buildJson({ lowercase: true, cleanText: true, specials: ['[SEP]'] }));
    expect(fast.encode('a [SEP] b')).toBeUndefined();
    expect(fast.encode('a b')).toEqual([VOCAB.a, VOCAB.b]);
    expect(fast.encode('a é')).toBeUndefined();
  });

  it('leaves text with a control character to the native tokenizer when an added token is matched in normalised text', async () => {
    const json = buildJson({ lowercase: true, cleanText: true, added: ['[SEP]'] });
    // clean_text drops the NUL and DEL, so the native tokenizer finds [SEP] in these.
    const texts = ['a [SE\u0000P] b', 'a [SE\u007fP] b'];
    for (const t of texts) expect(fastOf(json).encode(t)).toBeUndefined();
    expect(await encodeTexts(tokenizerFromJson(json), texts)).toEqual(await nativeIds(json, texts));
  });

  it('is not used for a configuration it does not implement', async () => {
    const json = buildJson({ lowercase: true, cleanText: true, wordPre: true });
    expect(FastWordPiece.fromJson(json)).toBeUndefined();
    expect(await usesFastPath(tokenizerFromJson(json))).toBe(false);
    expect(await usesFastPath(Tokenizer.fromString(FIXTURE_JSON))).toBe(false);
  });

  it('is used by loadTokenizer for the contract model', async () => {
    expect(await usesFastPath(loadTokenizer(join(import.meta.dirname, '../../fixtures/contract-model/tokenizer.json')))).toBe(true);
  });
});
