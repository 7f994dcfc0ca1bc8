// Chat register as a property of every conversation, harmful and benign alike: lowercase, shorthand,
// typos, letter repeats, emoticons, missing punctuation, random case, very short and very long turns
// and bursts of short lines from one side; or the tidy, capitalised, punctuated prose of the real
// benign sets. A register is drawn per conversation and per speaker, so how a chat is written is no
// cue for whether it is harmful: only what is said is.
//
// A second set of register-shift transforms (leetspeak, vowel dropping, an all-caps speaker, `...`
// between words, another emoticon family, odd spacing) is never used in training; it renders the
// `register-shift` test slice, which measures whether the model survives a register it never saw.

import type { Rng } from './rng.ts';

export interface Register {
  /** Tidy prose: capitalised, punctuated, shorthand written out (as the real benign sets read). */
  tidy: boolean;
  lower: boolean;
  /** Probability that each shorthand substitution applies to a turn. */
  shorthand: number;
  /** Probability of a typo per turn. */
  typo: number;
  /** Probability of a letter repeat (`sooo`, `heyyy`) per turn. */
  repeat: number;
  /** Probability of an emoticon per turn. */
  emoticon: number;
  /** Probability of stripping a turn's punctuation. */
  stripPunct: number;
  /** Probability of capitalising a random word. */
  randomCase: number;
  /** Probability that a turn is sent as a burst of 2-4 short lines. */
  burst: number;
  /** Probability that a turn is joined with the next one of the same speaker (very long turns). */
  join: number;
}

const SHORTHAND: Array<[RegExp, string]> = [
  // Phrases first, so that `want to` becomes `wanna` before `to` becomes `2`.
  [/\bwant to\b/gi, 'wanna'],
  [/\bgoing to\b/gi, 'gonna'],
  [/\bright now\b/gi, 'rn'],
  [/\bi don'?t know\b/gi, 'idk'],
  [/\bto be honest\b/gi, 'tbh'],
  [/\boh my god\b/gi, 'omg'],
  [/\byou're\b/gi, 'ur'],
  [/\byoure\b/gi, 'ur'],
  [/\byou\b/gi, 'u'],
  [/\byour\b/gi, 'ur'],
  [/\bare\b/gi, 'r'],
  [/\bto\b/gi, '2'],
  [/\bfor\b/gi, '4'],
  [/\bplease\b/gi, 'pls'],
  [/\bbecause\b/gi, 'bc'],
  [/\bwhat\b/gi, 'wat'],
  [/\bthanks\b/gi, 'thx'],
  [/\bpeople\b/gi, 'ppl'],
  [/\bokay\b/gi, 'k'],
  [/\breally\b/gi, 'rly'],
  [/\btonight\b/gi, '2nite'],
  [/\byeah\b/gi, 'ya'],
  [/\bhaha\b/gi, 'lol'],
];

/** Written out again in tidy turns. */
const LONGHAND: Array<[RegExp, string]> = [
  [/\bu\b/g, 'you'],
  [/\bur\b/g, 'your'],
  [/\br\b/g, 'are'],
  [/\bpls\b/g, 'please'],
  [/\bidk\b/g, "I don't know"],
  [/\bim\b/g, "I'm"],
  [/\bdont\b/g, "don't"],
  [/\bcant\b/g, "can't"],
  [/\bdidnt\b/g, "didn't"],
  [/\bthats\b/g, "that's"],
  [/\bwhats\b/g, "what's"],
  [/\byoure\b/g, "you're"],
  [/\bi\b/g, 'I'],
  [/\brn\b/g, 'right now'],
  [/\bwanna\b/g, 'want to'],
  [/\bgonna\b/g, 'going to'],
  [/\bya\b/g, 'yeah'],
  [/\btbh\b/g, 'to be honest'],
  [/\bthx\b/g, 'thanks'],
  [/\bbc\b/g, 'because'],
];

/** The training emoticon family. The register-shift family (`^_^`, `-_-`, `o.O`) is kept apart. */
export const EMOTICONS: readonly string[] = [':)', ':P', '<3', 'xD', ':(', ';)', ':D', '😂', '😊', '😭', '🙄', '❤️', '😅', '👀', '🥺', '😘', 'lol', 'lmao', 'haha'];

const QUESTION_START = /^(who|what|when|where|why|how|do|does|did|are|is|can|could|would|will|have|has|u|you|r)\b/i;

/** A register for one speaker; `base` makes the other speaker of the same conversation similar. */
export function drawRegister(rng: Rng, tidyShare: number, base?: Register): Register {
  if (base !== undefined && rng.chance(0.6)) {
    // Same register family as the other side, with some drift.
    return { ...base, shorthand: Math.min(1, base.shorthand * rng.pick([0.5, 1, 1.5])), burst: rng.pick([base.burst, 0, 0.1]) };
  }
  if (rng.chance(tidyShare)) {
    return { tidy: true, lower: false, shorthand: 0, typo: rng.pick([0, 0, 0.03]), repeat: 0, emoticon: rng.pick([0, 0, 0.05]), stripPunct: 0, randomCase: 0, burst: rng.pick([0, 0, 0.05]), join: rng.pick([0, 0.1, 0.3]) };
  }
  return {
    tidy: false,
    lower: rng.chance(0.75),
    shorthand: rng.pick([0.1, 0.4, 0.7, 0.9]),
    typo: rng.pick([0, 0.05, 0.15, 0.3]),
    repeat: rng.pick([0, 0.05, 0.15]),
    emoticon: rng.pick([0, 0.05, 0.15, 0.3]),
    stripPunct: rng.pick([0.2, 0.6, 0.95]),
    randomCase: rng.pick([0, 0, 0.05, 0.15]),
    burst: rng.pick([0, 0.05, 0.1, 0.2]),
    join: rng.pick([0, 0, 0.1, 0.25]),
  };
}

function typo(t: string, rng: Rng): string {
  if (t.length <= 4) return t;
  const i = rng.int(1, t.length - 2);
  if (!/[a-z]/i.test(t[i] ?? '')) return t;
  const kind = rng.int(0, 2);
  // Typos stay inside words: no letter moves across a space or next to a digit.
  if (kind === 0 && !/[a-z]/i.test(t[i + 1] ?? '')) return t;
  if (kind === 0) return t.slice(0, i) + (t[i + 1] ?? '') + (t[i] ?? '') + t.slice(i + 2);
  if (kind === 1) return t.slice(0, i) + t.slice(i + 1);
  return t.slice(0, i) + (t[i] ?? '') + t.slice(i);
}

/** One turn's text in a speaker's register. */
export function applyRegister(text: string, reg: Register, rng: Rng): string {
  let t = text;
  if (reg.tidy) {
    for (const [re, sub] of LONGHAND) t = t.replace(re, sub);
    if (rng.chance(reg.typo)) t = typo(t, rng);
    t = t.trim();
    if (t.length > 0) t = (t[0] ?? '').toUpperCase() + t.slice(1);
    if (!/[.!?)]$/.test(t) && /[a-z0-9]$/i.test(t)) t += QUESTION_START.test(t) ? '?' : rng.pick(['.', '.', '.', '!']);
    if (rng.chance(reg.emoticon)) t += ' ' + rng.pick([':)', '😊', ':D', ';)']);
    return t.replace(/\s+/g, ' ').trim();
  }
  if (reg.lower) t = t.toLowerCase();
  for (const [re, sub] of SHORTHAND) if (rng.chance(reg.shorthand)) t = t.replace(re, sub);
  if (rng.chance(reg.stripPunct)) t = t.replace(/[.,!?;]+(?=\s|$)/g, '').replace(/'/g, '');
  if (rng.chance(reg.typo)) t = typo(t, rng);
  if (rng.chance(reg.typo / 2)) t = typo(t, rng);
  if (rng.chance(reg.repeat)) t = t.replace(/([aeiouy])\b/, (_, v: string) => v.repeat(rng.int(2, 4)));
  if (rng.chance(reg.randomCase)) t = t.replace(/\b[a-z]+\b/g, (w) => (rng.chance(0.25) ? (w[0] ?? '').toUpperCase() + w.slice(1) : w));
  if (rng.chance(reg.emoticon)) t = rng.chance(0.85) ? `${t} ${rng.pick(EMOTICONS)}` : `${rng.pick(EMOTICONS)} ${t}`;
  if (!reg.lower && rng.chance(0.3) && t.length > 0) t = (t[0] ?? '').toUpperCase() + t.slice(1);
  if (rng.chance(0.06)) t += rng.pick(['!', '?', '!!', '??', '.']);
  return t.replace(/\s+/g, ' ').trim();
}

/** A turn's words cut into 2-4 short lines (a burst from one side). */
export function burstPieces(text: string, rng: Rng): string[] {
  const w = text.split(' ').filter((x) => x !== '');
  const k = Math.min(w.length, rng.int(2, 4));
  if (k < 2) return [text];
  const cuts = new Set<number>();
  while (cuts.size < k - 1) cuts.add(rng.int(1, w.length - 1));
  const sorted = [...cuts].sort((a, b) => a - b);
  const out: string[] = [];
  let prev = 0;
  for (const c of [...sorted, w.length]) {
    out.push(w.slice(prev, c).join(' '));
    prev = c;
  }
  return out;
}

export type Side = 0 | 1;
export interface Item {
  side: Side;
  text: string;
  /** A predator's move (generate.ts `Move.harmful`); carried to the lines it renders as. */
  harmful?: boolean;
}
export interface RenderedLine {
  side: Side;
  text: string;
  /** false: a continuation line without a speaker prefix. */
  prefixed: boolean;
  harmful?: boolean;
}

/** 0-based index of the first line rendered from a harmful item, or undefined when none is. */
export function firstHarmfulLine(lines: readonly { harmful?: boolean }[]): number | undefined {
  const i = lines.findIndex((l) => l.harmful === true);
  return i < 0 ? undefined : i;
}

/**
 * Turns rendered in their speakers' registers: long turns joined, bursts split into several lines
 * (some without a prefix, as pasted chats have), every turn restyled. The first line is always prefixed.
 */
export function registerLines(items: readonly Item[], regs: readonly [Register, Register], rng: Rng): RenderedLine[] {
  const joined: Item[] = [];
  for (const it of items) {
    const last = joined[joined.length - 1];
    if (last !== undefined && last.side === it.side && rng.chance(regs[it.side].join)) {
      last.text += rng.pick([' ', ', ', '. ']) + it.text;
      if (it.harmful === true) last.harmful = true;
    } else joined.push({ ...it });
  }
  const out: RenderedLine[] = [];
  let prev: Side | undefined;
  for (const it of joined) {
    const reg = regs[it.side];
    const styled = applyRegister(it.text, reg, rng);
    const text = styled === '' ? it.text.trim() || it.text : styled;
    const pieces = rng.chance(reg.burst) && text.split(' ').length >= 3 ? burstPieces(text, rng) : [text];
    for (const p of pieces) {
      if (p === '') continue;
      const prefixed = prev !== it.side || out.length === 0 || !rng.chance(0.3);
      out.push(it.harmful === true ? { side: it.side, text: p, prefixed, harmful: true } : { side: it.side, text: p, prefixed });
      prev = it.side;
    }
  }
  return out;
}

// ---- register-shift transforms: never used in training -----------------------------------------

/** The emoticon family only register-shift renderings use. */
export const SHIFT_EMOTICONS: readonly string[] = ['^_^', '-_-', 'o.O', '>_<', 'T_T', '^^;', '=)'];

/**
 * Marks that only register-shift transforms produce: another emoticon family, doubled spaces, a
 * digit between letters (leetspeak). Generated training records never match it, and the training
 * register never adds one to a real chat (a few real chats have one of their own, e.g. `RAV4EV`).
 * (`...` between words is a shift transform too, but real prose has it, so it is no marker.)
 */
export const SHIFT_MARKER = /\^_\^|-_-|o\.O|>_<|T_T|\^\^;|\S {2,}\S|[a-z][0134][a-z]/;

const LEET: Record<string, string> = { e: '3', o: '0', a: '4', i: '1' };

export type ShiftName = 'leet' | 'vowel_drop' | 'caps_speaker' | 'ellipsis' | 'emoticons' | 'spacing';

/** Each shift transform, applied to one turn's text (`caps_speaker` is applied to one side only). */
export const REGISTER_SHIFTS: Readonly<Record<ShiftName, (text: string, rng: Rng) => string>> = {
  leet: (t, rng) => t.replace(/[a-z]{3,}/gi, (w) => (rng.chance(0.6) ? w.replace(/[eoai]/gi, (c) => LEET[c.toLowerCase()] ?? c) : w)),
  vowel_drop: (t, rng) => t.replace(/[a-z]{4,}/gi, (w) => (rng.chance(0.7) ? (w[0] ?? '') + w.slice(1, -1).replace(/[aeiou]/gi, '') + w.slice(-1) : w)),
  caps_speaker: (t) => t.toUpperCase(),
  ellipsis: (t, rng) => {
    const w = t.split(' ');
    const out: string[] = [];
    let next = rng.int(2, 4);
    w.forEach((x, i) => {
      out.push(x);
      if (i === next && i < w.length - 1) {
        out.push('...');
        next += rng.int(2, 4);
      }
    });
    return out.join(' ');
  },
  emoticons: (t, rng) => (rng.chance(0.5) ? `${t} ${rng.pick(SHIFT_EMOTICONS)}` : t),
  spacing: (t, rng) => (rng.chance(0.5) ? t.replace(/ /g, () => (rng.chance(0.4) ? '  ' : ' ')) : t.replace(/, /g, ',').replace(/ (?=\w)/, '  ')),
};

/**
 * Items rendered with register-shift transforms only: 2-3 transforms per conversation, at least one
 * of which leaves a SHIFT_MARKER; `caps_speaker` turns one whole side to capitals.
 */
export function shiftLines(items: readonly Item[], rng: Rng): { lines: RenderedLine[]; shifts: ShiftName[] } {
  const marked: ShiftName[] = ['leet', 'emoticons', 'spacing'];
  const shifts = new Set<ShiftName>([rng.pick(marked)]);
  const all = Object.keys(REGISTER_SHIFTS) as ShiftName[];
  const extra = rng.int(1, 2);
  while (shifts.size < 1 + extra) shifts.add(rng.pick(all));
  const capsSide: Side = rng.chance(0.5) ? 0 : 1;
  const lines = items.map((it) => {
    let t = it.text;
    for (const s of shifts) {
      if (s === 'caps_speaker') {
        if (it.side === capsSide) t = REGISTER_SHIFTS.caps_speaker(t, rng);
      } else t = REGISTER_SHIFTS[s](t, rng);
    }
    return { side: it.side, text: t.trim(), prefixed: true };
  });
  // The marker must show at least once: the first turn long enough carries a shift emoticon if needed.
  if (!lines.some((l) => SHIFT_MARKER.test(l.text)) && lines.length > 0) {
    const l = lines[rng.int(0, lines.length - 1)] as RenderedLine;
    l.text += ' ' + rng.pick(SHIFT_EMOTICONS);
  }
  return { lines, shifts: [...shifts] };
}

/** Rendered lines as chat text: `name: text`, or the bare text for continuation lines. */
export function joinLines(lines: readonly RenderedLine[], names: readonly [string, string]): string {
  return lines.map((l, i) => (l.prefixed || i === 0 ? `${names[l.side]}: ${l.text}` : l.text)).join('\n');
}
