// A fast path for the commonest tokenizer.json (BertNormalizer + BertPreTokenizer + WordPiece) on
// ASCII text. The native binding costs about 2 µs per token, mostly in building Encoding objects; for
// ASCII (plus a few typographic punctuation marks) the three steps are simple enough to run in JS at a fraction of that. The native tokenizer stays
// the reference: this path is used only for configurations it fully understands, only for ASCII text
// without added tokens, and only after it reproduced the native ids on probe texts (see encode.ts).

/** The parts of tokenizer.json this path reads. */
interface TokenizerJson {
  added_tokens?: Array<{ content: string }>;
  normalizer?: { type?: string; clean_text?: boolean; lowercase?: boolean; strip_accents?: boolean | null; handle_chinese_chars?: boolean } | null;
  pre_tokenizer?: { type?: string } | null;
  model?: { type?: string; vocab?: Record<string, number>; unk_token?: string; continuing_subword_prefix?: string; max_input_chars_per_word?: number };
}

const WORD_CACHE_LIMIT = 50_000;

/**
 * Non-ASCII punctuation common in chat (typographic quotes, dashes, ellipsis). Each is Unicode
 * punctuation that BertNormalizer leaves unchanged (no control, space, CJK, accent or case), so
 * BertPreTokenizer makes it a word of its own, exactly like ASCII punctuation.
 */
const EXTRA_PUNCTUATION = new Set([0x2013, 0x2014, 0x2018, 0x2019, 0x201c, 0x201d, 0x2026]);

export class AsciiWordPiece {
  readonly #vocab: Map<string, number>;
  readonly #unkId: number;
  readonly #prefix: string;
  readonly #maxChars: number;
  readonly #cleanText: boolean;
  readonly #lowercase: boolean;
  /** Added tokens are matched in raw text by the native tokenizer; a text containing one goes there. */
  readonly #addedTokens: string[];
  #cache = new Map<string, readonly number[]>();

  private constructor(json: TokenizerJson, unkId: number) {
    const model = json.model as Required<NonNullable<TokenizerJson['model']>>;
    this.#vocab = new Map(Object.entries(model.vocab));
    this.#unkId = unkId;
    this.#prefix = model.continuing_subword_prefix;
    this.#maxChars = model.max_input_chars_per_word;
    this.#cleanText = json.normalizer?.clean_text !== false;
    this.#lowercase = json.normalizer?.lowercase !== false;
    this.#addedTokens = (json.added_tokens ?? []).map((t) => t.content.toLowerCase());
  }

  /** Returns the fast path for a tokenizer.json it fully understands, else undefined. */
  static fromJson(text: string): AsciiWordPiece | undefined {
    let json: TokenizerJson;
    try {
      json = JSON.parse(text) as TokenizerJson;
    } catch {
      return undefined;
    }
    const { normalizer, pre_tokenizer: pre, model } = json;
    if (normalizer?.type !== 'BertNormalizer' || pre?.type !== 'BertPreTokenizer' || model?.type !== 'WordPiece') return undefined;
    if (typeof model.vocab !== 'object' || model.vocab === null) return undefined;
    if (typeof model.unk_token !== 'string' || typeof model.continuing_subword_prefix !== 'string') return undefined;
    if (typeof model.max_input_chars_per_word !== 'number') return undefined;
    const unkId = model.vocab[model.unk_token];
    if (unkId === undefined) return undefined;
    return new AsciiWordPiece(json, unkId);
  }

  /** Token ids of `text`, or undefined when the text is not for this path (non-ASCII, added token). */
  encode(text: string): number[] | undefined {
    // One scan decides eligibility and whether normalisation has anything to do.
    let needsClean = false;
    let needsLower = false;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c > 0x7e) {
        if (c === 0x7f) needsClean = true;
        else if (!EXTRA_PUNCTUATION.has(c)) return undefined;
      } else if (c < 0x20) needsClean = true;
      else if (c >= 0x41 && c <= 0x5a) needsLower = true;
    }
    if (this.#addedTokens.length > 0) {
      const lower = text.toLowerCase();
      if (this.#addedTokens.some((t) => lower.includes(t))) return undefined;
    }
    let s = text;
    if (needsClean && this.#cleanText) {
      // BertNormalizer clean_text: drop control characters (all of C0 and DEL except tab, LF, CR), then
      // turn the remaining whitespace into spaces.
      s = s.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, '').replace(/[\t\n\r]/g, ' ');
    }
    if (needsLower && this.#lowercase) s = s.toLowerCase();

    const ids: number[] = [];
    let start = -1;
    for (let i = 0; i <= s.length; i++) {
      const c = i < s.length ? s.charCodeAt(i) : 0x20;
      // BertPreTokenizer: whitespace splits and is dropped; each ASCII punctuation is a word of its own.
      const space = c === 0x20 || (c >= 0x09 && c <= 0x0d);
      const punct =
        (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e) || EXTRA_PUNCTUATION.has(c);
      if (space || punct) {
        if (start !== -1) {
          this.#word(s.slice(start, i), ids);
          start = -1;
        }
        if (punct) this.#word(s[i] as string, ids);
      } else if (start === -1) start = i;
    }
    return ids;
  }

  #word(word: string, out: number[]): void {
    let pieces = this.#cache.get(word);
    if (pieces === undefined) {
      pieces = this.#wordPiece(word);
      if (this.#cache.size >= WORD_CACHE_LIMIT) this.#cache = new Map();
      this.#cache.set(word, pieces);
    }
    for (const id of pieces) out.push(id);
  }

  /** Greedy longest-match-first, as the WordPiece model does; an unmatched rest makes the word [UNK]. */
  #wordPiece(word: string): readonly number[] {
    if (word.length > this.#maxChars) return [this.#unkId];
    const whole = this.#vocab.get(word);
    if (whole !== undefined) return [whole];
    const ids: number[] = [];
    let start = 0;
    while (start < word.length) {
      let end = word.length;
      let id: number | undefined;
      while (start < end) {
        const sub = start > 0 ? this.#prefix + word.slice(start, end) : word.slice(start, end);
        id = this.#vocab.get(sub);
        if (id !== undefined) break;
        end--;
      }
      if (id === undefined) return [this.#unkId];
      ids.push(id);
      start = end;
    }
    return ids;
  }
}
