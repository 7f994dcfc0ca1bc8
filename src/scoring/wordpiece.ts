// A fast path for the commonest tokenizer.json (BertNormalizer + BertPreTokenizer + WordPiece). The
// native binding costs about 2 µs per token plus an asynchronous round trip per call, mostly in building
// Encoding objects; the three steps are simple enough to run in JS at a fraction of that. The native
// tokenizer stays the reference: this path is used only for configurations it fully understands, never
// for text that might hold an added token, and only after it reproduced the native ids on probe texts
// (see encode.ts).
//
// ASCII text runs through hand-written BERT rules. Other characters follow a table learned from the
// native normalizer and pre-tokenizer themselves, one character at a time, because the native library's
// Unicode tables (its control and punctuation classes, its NFD) are not the ones this Node's ICU has:
// an emoji newer than those tables is "unassigned" there and dropped as a control character.

/** The parts of tokenizer.json this path reads. */
interface TokenizerJson {
  added_tokens?: Array<{ content: string }>;
  normalizer?: { type?: string; clean_text?: boolean; lowercase?: boolean; strip_accents?: boolean | null; handle_chinese_chars?: boolean } | null;
  pre_tokenizer?: { type?: string } | null;
  model?: { type?: string; vocab?: Record<string, number>; unk_token?: string; continuing_subword_prefix?: string; max_input_chars_per_word?: number };
}

/** The native tokenizer's first two steps, asked about single characters to learn the table. */
export interface NativeSteps {
  normalize(text: string): string;
  preTokenize(text: string): string[];
}

/**
 * What the native steps do with one character:
 * - `join`: it stays inside the current word as this normalised text ('' when it is dropped);
 * - `split`: it ends the current word, and these words (none for whitespace) stand on their own;
 * - null: its outcome depends on its neighbours, so texts holding it go to the native tokenizer.
 */
type CharRule = { join: string } | { split: readonly string[] } | null;

// The learned table stores one kind per code point; only characters that normalise to something else
// (É -> e, a Hangul syllable -> its jamo) keep a rule object: about 14,300 with the shipped tokenizer,
// 11,172 of them Hangul syllables. Unicode bounds both, so no input can grow the table or fill it.
const UNKNOWN = 0;
const DECLINE = 1;
const JOIN_SELF = 2;
const SPLIT_SELF = 3;
const DROP = 4;
const SPACE = 5;
const OTHER = 6;

const WORD_CACHE_LIMIT = 50_000;
/**
 * New characters learned for one call at most (each costs four native calls, 10 to 20 µs, so a
 * conversation pays at most about 20 ms); a text with more goes native this time, and what was
 * learned stays learned.
 */
export const LEARN_PER_CALL = 1_000;

/** How many new characters the texts of one call may still learn; shared by all of them. */
export interface LearningBudget {
  left: number;
}

/**
 * Whether NFD may move `c` among its neighbours: a character of non-zero combining class sorts past
 * one of class 1 (U+0334) or 240 (U+0345). Combining classes never change once assigned, so Node's
 * ICU and the native library agree on every character both know; one only ICU knows is declined, and
 * one only the native library knows is asked there (nativeReorders).
 */
function reorderable(c: string): boolean {
  return `a\u0345${c}`.normalize('NFD') !== `a\u0345${c}` || `a${c}\u0334`.normalize('NFD') !== `a${c}\u0334`;
}

/**
 * Musical stem marks of combining classes 216 and 226, references for reordering: spacing marks, which
 * strip_accents keeps (it drops only non-spacing ones), known to Unicode since 3.1.
 */
const KEPT_MARKS = ['\u{1d165}', '\u{1d16d}'];
/** A mark, or a character this Node's ICU does not know (a newer native library may). */
const MARK_OR_UNKNOWN = /[\p{M}\p{Cn}]/u;

/** A copy of `word` that does not keep alive the text it was sliced from (V8 sliced strings do). */
function detached(word: string): string {
  return ` ${word}`.slice(1);
}

export class FastWordPiece {
  readonly #vocab: Map<string, number>;
  readonly #unkId: number;
  readonly #prefix: string;
  readonly #maxChars: number;
  readonly #cleanText: boolean;
  readonly #lowercase: boolean;
  /** Added tokens are matched before the model's pieces, by the native tokenizer: text that may hold one goes there. */
  readonly #addedTokens: string[];
  readonly #native: NativeSteps | undefined;
  /** One kind per code point: at most 1.1 MB per worker. */
  readonly #kinds = new Uint8Array(0x110000);
  readonly #others = new Map<number, { join: string } | { split: readonly string[] }>();
  #cache = new Map<string, readonly number[]>();

  private constructor(json: TokenizerJson, unkId: number, native: NativeSteps | undefined) {
    const model = json.model as Required<NonNullable<TokenizerJson['model']>>;
    this.#vocab = new Map(Object.entries(model.vocab));
    this.#unkId = unkId;
    this.#prefix = model.continuing_subword_prefix;
    this.#maxChars = model.max_input_chars_per_word;
    this.#cleanText = json.normalizer?.clean_text !== false;
    this.#lowercase = json.normalizer?.lowercase !== false;
    this.#addedTokens = (json.added_tokens ?? []).map((t) => t.content.toLowerCase());
    this.#native = native;
  }

  /**
   * Returns the fast path for a tokenizer.json it fully understands, else undefined. Without `native`
   * it takes ASCII text only.
   */
  static fromJson(text: string, native?: NativeSteps): FastWordPiece | undefined {
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
    return new FastWordPiece(json, unkId, native);
  }

  /**
   * Token ids of `text`, or undefined when the text is not for this path. Texts encoded for one
   * conversation share one `budget`, so that it bounds what one request can make this path learn.
   */
  encode(text: string, budget: LearningBudget = { left: LEARN_PER_CALL }): number[] | undefined {
    // One scan decides the path and whether normalisation has anything to do.
    let needsClean = false;
    let needsLower = false;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c > 0x7e) {
        if (c === 0x7f) needsClean = true;
        else return this.#encodeUnicode(text, budget);
      } else if (c < 0x20) needsClean = true;
      else if (c >= 0x41 && c <= 0x5a) needsLower = true;
    }
    // A normalised added token can also match across a control character that clean_text drops.
    if (this.#addedTokens.length > 0 && (needsClean || this.#hasAddedToken(text))) return undefined;
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
      const punct = (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e);
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

  #hasAddedToken(text: string): boolean {
    const lower = text.toLowerCase();
    return this.#addedTokens.some((t) => lower.includes(t));
  }

  /** Text with a character outside ASCII: every character follows its learned rule. */
  #encodeUnicode(text: string, budget: LearningBudget): number[] | undefined {
    // An added token may match only after normalisation, which the raw-text check cannot see.
    if (this.#native === undefined || this.#addedTokens.length > 0) return undefined;
    const ids: number[] = [];
    let word = '';
    for (const ch of text) {
      const cp = ch.codePointAt(0) as number;
      let kind = this.#kinds[cp];
      if (kind === UNKNOWN) {
        if (budget.left <= 0) return undefined;
        budget.left--;
        kind = this.#learn(ch, cp);
      }
      if (kind === JOIN_SELF) word += ch;
      else if (kind === DROP) continue;
      else if (kind === DECLINE) return undefined;
      else {
        const rule = kind === OTHER ? this.#others.get(cp) : undefined;
        if (rule !== undefined && 'join' in rule) {
          word += rule.join;
          continue;
        }
        if (word !== '') this.#word(word, ids);
        word = '';
        if (kind === SPLIT_SELF) this.#word(ch, ids);
        else if (rule !== undefined) for (const w of rule.split) this.#word(w, ids);
      }
    }
    if (word !== '') this.#word(word, ids);
    return ids;
  }

  /** Learns and records what the native steps do with `ch`. */
  #learn(ch: string, cp: number): number {
    const rule = this.#ruleOf(ch);
    let kind: number;
    if (rule === null) kind = DECLINE;
    else if ('join' in rule) kind = rule.join === '' ? DROP : rule.join === ch ? JOIN_SELF : OTHER;
    else if (rule.split.length === 0) kind = SPACE;
    else kind = rule.split.length === 1 && rule.split[0] === ch ? SPLIT_SELF : OTHER;
    if (kind === OTHER && rule !== null) this.#others.set(cp, rule);
    this.#kinds[cp] = kind;
    return kind;
  }

  /** Asks the native steps about `ch` alone and beside letters; keeps the rule only if it is context-free. */
  #ruleOf(ch: string): CharRule {
    try {
      return this.#askNative(ch);
    } catch {
      // The binding refused the character: its texts go to the binding, which will answer for them.
      return null;
    }
  }

  #askNative(ch: string): CharRule {
    // A lone surrogate (half an emoji cut by a client) is learned like any character: it reaches the
    // native steps through the same conversion (to U+FFFD) whether they normalise it or encode it.
    const native = this.#native as NativeSteps;
    const n = native.normalize(ch);
    // strip_accents drops only non-spacing marks; a spacing or enclosing mark it keeps may be reordered
    // by NFD among its neighbours when its combining class is not zero.
    for (const c of n) if (reorderable(c) || (MARK_OR_UNKNOWN.test(c) && this.#nativeReorders(c))) return null;
    // BertNormalizer works one character at a time, so these two never differ today; they guard the
    // table against a normaliser that does not.
    if (native.normalize(`a${ch}a`) !== `a${n}a` || native.normalize(ch + ch) !== n + n) return null;
    const inWord = native.preTokenize(`a${n}a`);
    if (inWord.length === 1 && inWord[0] === `a${n}a`) return { join: n };
    const alone = native.preTokenize(n);
    const expected = ['a', ...alone, 'a'];
    if (inWord.length === expected.length && inWord.every((w, k) => w === expected[k])) return { split: alone };
    return null;
  }

  /**
   * Whether the native normaliser itself moves `c` past a kept mark of class 216 or 226: any non-zero
   * class of `c` makes one of these four orders change, whichever Unicode version its tables have.
   */
  #nativeReorders(c: string): boolean {
    const native = this.#native as NativeSteps;
    const alone = native.normalize(c);
    for (const m of KEPT_MARKS) {
      if (native.normalize(m) !== m) continue;
      if (native.normalize(`a${m}${c}`) !== `a${m}${alone}` || native.normalize(`a${c}${m}`) !== `a${alone}${m}`) return true;
    }
    return false;
  }

  #word(word: string, out: number[]): void {
    let pieces = this.#cache.get(word);
    if (pieces === undefined) {
      pieces = this.#wordPiece(word);
      // A word of more UTF-16 units than a piece has characters is rarely worth an entry of its size
      // (one too long for a piece is [UNK] at once; a word of many emoji is recomputed).
      if (word.length <= this.#maxChars) {
        if (this.#cache.size >= WORD_CACHE_LIMIT) this.#cache = new Map();
        this.#cache.set(detached(word), pieces);
      }
    }
    for (const id of pieces) out.push(id);
  }

  /**
   * Greedy longest-match-first over characters (code points, as the native model counts them), as the
   * WordPiece model does; an unmatched rest makes the word [UNK].
   */
  #wordPiece(word: string): readonly number[] {
    // More UTF-16 units than twice the limit is more characters than the limit.
    if (word.length > this.#maxChars * 2) return [this.#unkId];
    const whole = this.#vocab.get(word);
    // Offsets of character boundaries: an emoji is one character but two UTF-16 units.
    const bounds: number[] = [0];
    for (let i = 0; i < word.length; ) {
      i += (word.codePointAt(i) as number) > 0xffff ? 2 : 1;
      bounds.push(i);
    }
    const chars = bounds.length - 1;
    if (chars > this.#maxChars) return [this.#unkId];
    if (whole !== undefined) return [whole];
    const ids: number[] = [];
    let start = 0;
    while (start < chars) {
      let end = chars;
      let id: number | undefined;
      while (start < end) {
        const sub = word.slice(bounds[start], bounds[end]);
        id = this.#vocab.get(start > 0 ? this.#prefix + sub : sub);
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
