import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Tokenizer, WordPiece, bertNormalizer, bertPreTokenizer, whitespacePreTokenizer } from 'tokenizers';
import { describe, expect, it } from 'vitest';
import { encodeTexts, loadTokenizer, tokenizerFromJson, usesFastPath } from '../../../src/scoring/encode.ts';
import { AsciiWordPiece } from '../../../src/scoring/wordpiece.ts';

const FIXTURE_JSON = readFileSync(join(import.meta.dirname, '../../fixtures/contract-model/tokenizer.json'), 'utf8');
const VOCAB: Record<string, number> = JSON.parse(FIXTURE_JSON).model.vocab;
const WORDS = Object.keys(VOCAB).map((w) => w.replace(/^##/, ''));

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

async function nativeIds(json: string, texts: string[]): Promise<number[][]> {
  const native = Tokenizer.fromString(json);
  return (await native.encodeBatch(texts, { addSpecialTokens: false })).map((e) => e.getIds());
}

/** Chat-like text: vocabulary words and fragments, upper case, ASCII punctuation, controls, some non-ASCII. */
const chatText = fc
  .array(
    fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...WORDS) },
      { weight: 2, arbitrary: fc.constantFrom(...WORDS).map((w) => w.toUpperCase()) },
      { weight: 3, arbitrary: fc.constantFrom(' ', '  ', '\t', '\n', '\r\n') },
      { weight: 2, arbitrary: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)) },
      { weight: 2, arbitrary: fc.constantFrom('\u2013', '\u2014', '\u2018', '\u2019', '\u201c', '\u201d', '\u2026') },
      { weight: 1, arbitrary: fc.constantFrom('é', '中', '😀', '\u00a0', 'İ', '\u2010', '\u00ab', '[PAD]', '[SEP]', 'x'.repeat(101)) },
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

describe('the fast ASCII WordPiece path gives exactly the native tokenizer ids', () => {
  it.each([
    ['lowercase, clean_text (the contract model)', { lowercase: true, cleanText: true }],
    ['cased', { lowercase: false, cleanText: true }],
    ['without clean_text', { lowercase: true, cleanText: false }],
    ['with special added tokens', { lowercase: true, cleanText: true, specials: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] }],
  ])('%s', async (_name, options) => {
    const json = buildJson(options);
    const tokenizer = tokenizerFromJson(json);
    expect(await usesFastPath(tokenizer)).toBe(true);
    await fc.assert(
      fc.asyncProperty(fc.array(chatText, { minLength: 1, maxLength: 8 }), async (texts) => {
        expect(await encodeTexts(tokenizer, texts)).toEqual(await nativeIds(json, texts));
      }),
      { numRuns: 150 },
    );
  });

  it('leaves non-ASCII text to the native tokenizer, except typographic quotes, dashes and ellipsis', () => {
    const fast = AsciiWordPiece.fromJson(FIXTURE_JSON);
    expect(fast?.encode('hello')).toEqual([VOCAB.hello]);
    expect(fast?.encode('héllo')).toBeUndefined();
    expect(fast?.encode('hi 😀')).toBeUndefined();
    expect(fast?.encode('it\u2019s')).toEqual([VOCAB.it, VOCAB['[UNK]'], VOCAB.s]);
  });

  it('leaves text containing an added token to the native tokenizer', () => {
    const fast = AsciiWordPiece.fromJson(buildJson({ lowercase: true, cleanText: true, specials: ['[SEP]'] }));
    expect(fast?.encode('a [SEP] b')).toBeUndefined();
    expect(fast?.encode('a b')).toEqual([VOCAB.a, VOCAB.b]);
  });

  it('is not used for a configuration it does not implement', async () => {
    const json = buildJson({ lowercase: true, cleanText: true, wordPre: true });
    expect(AsciiWordPiece.fromJson(json)).toBeUndefined();
    expect(await usesFastPath(tokenizerFromJson(json))).toBe(false);
    expect(await usesFastPath(Tokenizer.fromString(FIXTURE_JSON))).toBe(false);
  });

  it('is used by loadTokenizer for the contract model', async () => {
    expect(await usesFastPath(loadTokenizer(join(import.meta.dirname, '../../fixtures/contract-model/tokenizer.json')))).toBe(true);
  });
});
