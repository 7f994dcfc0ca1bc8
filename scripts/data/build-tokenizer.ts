// Builds tokenizer.json (WordPiece, BERT normalizer and pre-tokenizer) from the training corpus.
// The Node `tokenizers` binding has no configurable trainer, so the vocabulary is counted here:
// specials, every character seen (alone and as `##` continuation), frequent words, then the most
// useful word-initial prefixes and `##` pieces of the words left out, so rare words and typos
// still split into meaningful pieces instead of [UNK].
//
// Hybrid mode (--vectors): the vocabulary also holds, as whole words, the most frequent words of a
// pretrained vector file and every word of the training text the file knows, and the vectors of
// those entries are written beside the tokenizer (--embeddings-out) for the trainer. Words the
// model never saw in training then still arrive with their meaning ("webcam", "asl", "luv"), and
// WordPiece pieces cover what the file lacks (typos, letter repeats).
//
//   node scripts/data/build-tokenizer.ts --in .tmp/data/corpus.jsonl --out .tmp/model/tokenizer.json
//        [--vectors wink.json --vector-top 40000 --embeddings-out .tmp/model/embeddings.f32]

import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { Tokenizer, WordPiece, bertNormalizer, bertPreTokenizer, wordPieceDecoder } from 'tokenizers';
import { parseJsonl, type LabeledConversation } from './record.ts';
import { embeddingMatrix, readWordVectors, writeEmbeddingMatrix, type WordVectors } from './embeddings.ts';

export interface VocabOptions {
  /** Entries besides the pretrained words of hybrid mode. */
  size: number;
  /** A character must occur this often to get its own entry (rarer ones become [UNK]). */
  minCharCount: number;
  minWordCount: number;
  /** Hybrid mode: the pretrained vectors, and how many of their most frequent words to take. */
  vectors?: WordVectors | undefined;
  vectorTop?: number | undefined;
}

/** Only words the pre-tokenizer can yield whole: lower-case letters and digits. */
const PLAIN_WORD = /^[\p{Ll}\p{Nd}]+$/u;

export const DEFAULT_VOCAB: VocabOptions = { size: 8000, minCharCount: 3, minWordCount: 3 };

// Mirrors what bertNormalizer({lowercase, stripAccents}) + bertPreTokenizer do, closely enough
// to count words; the real tokenizer decides the final split at encode time.
const PUNCT = /[\p{P}!-/:-@[-`{-~]/u;
export function preTokenize(text: string): string[] {
  const norm = text.normalize('NFD').replace(/\p{Mn}/gu, '').toLowerCase();
  const words: string[] = [];
  for (const chunk of norm.split(/\s+/)) {
    let cur = '';
    for (const ch of chunk) {
      if (PUNCT.test(ch)) {
        if (cur) words.push(cur);
        words.push(ch);
        cur = '';
      } else cur += ch;
    }
    if (cur) words.push(cur);
  }
  return words;
}

/** Text of each turn (prefix stripped): the tokenizer never sees speaker names in service. */
function turnTexts(conversation: string): string[] {
  return conversation.split('\n').map((line) => line.replace(/^[^:\s]{1,40}:\s*/, ''));
}

export function buildVocab(texts: Iterable<string>, options: VocabOptions = DEFAULT_VOCAB): Record<string, number> {
  const words = new Map<string, number>();
  for (const text of texts) {
    for (const w of preTokenize(text)) words.set(w, (words.get(w) ?? 0) + 1);
  }
  const chars = new Map<string, number>();
  for (const [w, n] of words) for (const ch of w) chars.set(ch, (chars.get(ch) ?? 0) + n);

  const vocab: string[] = ['[PAD]', '[UNK]'];
  const seen = new Set(vocab);
  let pretrained = 0;
  const add = (token: string, isPretrained = false): void => {
    // Lone surrogates would collapse to U+FFFD in the Rust side and break the dense id range.
    if (!seen.has(token) && (isPretrained || vocab.length - pretrained < options.size) && !/\p{Cs}/u.test(token)) {
      seen.add(token);
      vocab.push(token);
      if (isPretrained) pretrained++;
    }
  };
  const charList = [...chars].filter(([, n]) => n >= options.minCharCount).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  for (const [ch] of charList) add(ch);
  for (const [ch] of charList) add('##' + ch);

  const byFreq = [...words].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const { vectors } = options;
  if (vectors !== undefined) {
    // Training words the vectors know first, then the file's most frequent words: neither counts
    // against `size`, which stays the budget of trainable-only entries.
    for (const [w] of byFreq) if (PLAIN_WORD.test(w) && vectors.vector(w) !== undefined) add(w, true);
    let taken = 0;
    for (const w of vectors.ranked) {
      if (taken >= (options.vectorTop ?? 0)) break;
      if (!PLAIN_WORD.test(w) || w.normalize('NFD') !== w) continue;
      taken++;
      add(w, true);
    }
  }
  const wordBudget = Math.floor((options.size - (vocab.length - pretrained)) * 0.75);
  const keptWords = byFreq.filter(([, n]) => n >= options.minWordCount).slice(0, wordBudget);
  for (const [w] of keptWords) add(w);

  // Pieces of the words left out, weighted by frequency times length (characters saved).
  const pieces = new Map<string, number>();
  for (const [w, n] of byFreq) {
    if (seen.has(w) || w.length < 3) continue;
    const cs = [...w];
    for (let len = 2; len <= Math.min(6, cs.length - 1); len++) {
      const prefix = cs.slice(0, len).join('');
      pieces.set(prefix, (pieces.get(prefix) ?? 0) + n * len);
      for (let start = 1; start + len <= cs.length; start++) {
        const p = '##' + cs.slice(start, start + len).join('');
        pieces.set(p, (pieces.get(p) ?? 0) + n * len);
      }
    }
  }
  for (const [p] of [...pieces].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) {
    if (vocab.length - pretrained >= options.size) break;
    add(p);
  }
  return Object.fromEntries(vocab.map((t, i) => [t, i]));
}

export function buildTokenizer(vocab: Record<string, number>): Tokenizer {
  const tokenizer = new Tokenizer(WordPiece.init(vocab, { unkToken: '[UNK]', continuingSubwordPrefix: '##', maxInputCharsPerWord: 100 }));
  tokenizer.setNormalizer(bertNormalizer({ lowercase: true, stripAccents: true, cleanText: true, handleChineseChars: true }));
  tokenizer.setPreTokenizer(bertPreTokenizer());
  tokenizer.setDecoder(wordPieceDecoder('##', true));
  return tokenizer;
}

/** Builds from the training split only, so held-out text never shapes the vocabulary. */
export function buildFromCorpus(records: LabeledConversation[], options: VocabOptions = DEFAULT_VOCAB): Tokenizer {
  function* texts(): Generator<string> {
    for (const r of records) if (r.split === 'train') yield* turnTexts(r.conversation);
  }
  return buildTokenizer(buildVocab(texts(), options));
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      in: { type: 'string' },
      out: { type: 'string' },
      size: { type: 'string', default: String(DEFAULT_VOCAB.size) },
      vectors: { type: 'string' },
      'vector-top': { type: 'string', default: '40000' },
      'embeddings-out': { type: 'string' },
    },
  });
  if (!values.in || !values.out) throw new Error('usage: build-tokenizer.ts --in corpus.jsonl --out tokenizer.json [--vectors f --embeddings-out m.f32]');
  if (values.vectors !== undefined && values['embeddings-out'] === undefined) throw new Error('--vectors needs --embeddings-out');
  const records = parseJsonl<LabeledConversation>(readFileSync(values.in, 'utf8'));
  const vectors = values.vectors === undefined ? undefined : readWordVectors(values.vectors);
  const tokenizer = buildFromCorpus(records, { ...DEFAULT_VOCAB, size: Number(values.size), vectors, vectorTop: Number(values['vector-top']) });
  mkdirSync(dirname(values.out), { recursive: true });
  tokenizer.save(values.out);
  console.error(`tokenizer: ${tokenizer.getVocabSize()} entries -> ${values.out}`);
  if (vectors !== undefined && values['embeddings-out'] !== undefined) {
    const m = embeddingMatrix(tokenizer.getVocab(true), vectors);
    writeEmbeddingMatrix(values['embeddings-out'], m, vectors.dimensions);
    console.error(`embeddings: ${m.covered} of ${m.rows} entries have pretrained vectors -> ${values['embeddings-out']}`);
  }
}
