import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Tokenizer, WordPiece, bertNormalizer, bertPreTokenizer, whitespacePreTokenizer } from 'tokenizers';
import { describe, expect, it, vi } from 'vitest';
import { encodeTexts, loadTokenizer, tokenizerFromJson, usesFastPath } from '../../../src/scoring/encode.ts';
import { FastWordPiece, type NativeSteps } from '../../../src/scoring/wordpiece.ts';

const FIXTURE_JSON = readFileSync(join(import.meta.dirname, '../../fixtures/contract-model/tokenizer.json'), 'utf8');
/** The shipped model's tokenizer: 53k pieces, emoji and typographic punctuation among them. */
const SHIPPED_JSON = readFileSync(join(import.meta.dirname, '../../../models/conversation-risk/tokenizer.json'), 'utf8');
const VOCAB: Record<string, number> = JSON.parse(FIXTURE_JSON).model.vocab;

/** A tokenizer.json built by the native binding, with the given normalizer flags and special tokens. */
function buildJson(options: { lowercase: boolean; cleanText: boolean; specials?: string[]; wordPre?: boolean }): string {
  const t = new Tokenizer(WordPiece.init(VOCAB, { unkToken: '[UNK]' }));
  t.setNormalizer(bertNormalizer({ lowercase: options.lowercase, cleanText: options.cleanText }));
  t.setPreTokenizer(options.wordPre === true ? whitespacePreTokenizer() : bertPreTokenizer());
  if (options.specials !== undefined) t.addSpecialTokens(options.specials);
  const dir = mkdtempSync(join(tmpdir(), 'tokenizer-'));
  try {
    t.save(join(dir, 'tokenizer.json'));
    return readFileSync(join(dir, 'tokenizer.json'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const natives = new Map<string, Tokenizer>();

async function nativeIds(json: string, texts: string[]): Promise<number[][]> {
  let native = natives.get(json);
  if (native === undefined) natives.set(json, (native = Tokenizer.fromString(json)));
  return (await native.encodeBatch(texts, { addSpecialTokens: false })).map((e) => e.getIds());
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
    await fc.assert(
      fc.asyncProperty(fc.array(chatText(words), { minLength: 1, maxLength: 8 }), async (texts) => {
        expect(await encodeTexts(tokenizer, texts)).toEqual(await nativeIds(json, texts));
      }),
      { numRuns: 200 },
    );
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

  it('leaves text with a character whose outcome depends on its neighbours to the native tokenizer', () => {
    const native = Tokenizer.fromString(FIXTURE_JSON);
    const steps: NativeSteps = {
      normalize: (text) => native.getNormalizer()?.normalizeString(text) ?? text,
      preTokenize: (text) => native.getPreTokenizer()?.preTokenizeString(text).map(([w]) => w) ?? [],
    };
    const fast = FastWordPiece.fromJson(FIXTURE_JSON, steps);
    expect(fast?.encode('hello')).toEqual([VOCAB.hello]);
    expect(fast?.encode('héllo')).toEqual([VOCAB.hello]);
    // A spacing mark (Devanagari visarga) survives normalisation, and NFD may reorder such marks.
    expect(fast?.encode('hello \u0903')).toBeUndefined();
  });

  it('takes only ASCII text when it cannot ask the native normaliser', () => {
    const fast = FastWordPiece.fromJson(FIXTURE_JSON);
    expect(fast?.encode('hello')).toEqual([VOCAB.hello]);
    expect(fast?.encode('héllo')).toBeUndefined();
    expect(fast?.encode('it\u2019s')).toBeUndefined();
  });

  it('leaves text containing an added token, and any non-ASCII text, to the native tokenizer when there are added tokens', () => {
    const json = buildJson({ lowercase: true, cleanText: true, specials: ['[SEP]'] });
    const native = Tokenizer.fromString(json);
    const fast = FastWordPiece.fromJson(json, {
      normalize: (text) => native.getNormalizer()?.normalizeString(text) ?? text,
      preTokenize: (text) => native.getPreTokenizer()?.preTokenizeString(text).map(([w]) => w) ?? [],
    });
    expect(fast?.encode('a [SEP] b')).toBeUndefined();
    expect(fast?.encode('a b')).toEqual([VOCAB.a, VOCAB.b]);
    expect(fast?.encode('a é')).toBeUndefined();
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
