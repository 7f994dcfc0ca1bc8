// Turns and speakers, exactly as docs/model-contract.md ("From text to tensors", step 1) states.
import type { ParsedTurn, Speaker } from './types.ts';

/**
 * A speaker prefix: a short name (letters with their combining marks and the zero-width
 * (non-)joiners some scripts spell with, digits, `_`, spaces, dots, dashes; at most 32 characters, starting with a letter, digit or `_`) followed by `:` and then
 * whitespace or the end of the line. Requiring whitespace after the colon keeps `http://x` and
 * `12:30` from being read as speakers. Invisible format characters before the name (a byte-order
 * mark, a zero-width space, a direction mark) are skipped: an export that starts with one must not
 * lose its first speaker, which would hand the child user1's slot. Any Unicode space may stand before
 * the name and before the colon (a no-break space from an HTML copy, an ideographic space), as a
 * no-break space already may after it (`\s`).
 */
const PREFIX = /^[\p{Zs}\t\p{Cf}]*([\p{L}\p{N}_][\p{L}\p{M}\p{N}_ .\-\u200c\u200d]{0,31}?)[\p{Zs}\t]*:(?=\s|$)/u;

// A Map, not an object literal: a name is the caller's text, and `constructor` or `__proto__` would
// find Object.prototype's members and become a speaker no tensor knows.
const DIRECT = new Map<string, Speaker>([
  ['user1', 'user1'],
  ['user2', 'user2'],
]);

/**
 * Below this share of its non-empty lines starting with a prefix, and with no name starting two lines,
 * a text that never names `user1:` or `user2:` is flat text holding a few `label: value` lines
 * (`age: 14`, `snap: jess_x`, `PS:`), not a chat with speakers: read as speakers, the label would take
 * user1's slot and run every line after it into one turn. A name that comes back is a speaker's, so a
 * chat whose messages run to many lines keeps its speakers.
 */
const MIN_PREFIXED_SHARE = 0.25;

/**
 * Splits a conversation into speaker turns. Lines are split on `\n`, `\r\n` or `\r`. Text with no
 * speaker prefix anywhere, or with only a few labels (MIN_PREFIXED_SHARE), is flat (an
 * export or a paste): each of its lines is a turn of an 'unknown' speaker, so it reads as a
 * conversation rather than one giant turn of user1.
 */
export function parseTurns(text: string): ParsedTurn[] {
  const lines = text.split(/\r\n|\r|\n/);
  // Names other than user1/user2 map to whichever user slot is still free, in order of first appearance.
  const names = new Map<string, Speaker>();
  const taken = new Set<Speaker>();
  const raw: Array<{ speaker: Speaker; parts: string[]; line: number }> = [];
  let current: { speaker: Speaker; parts: string[]; line: number } | undefined;
  let prefixed = false;
  let direct = false;
  let prefixedLines = 0;
  let nonEmptyLines = 0;
  const namesSeen = new Set<string>();
  let nameRepeated = false;

  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    const match = PREFIX.exec(line);
    if (line.trim().length > 0) nonEmptyLines++;
    let speaker: Speaker | undefined;
    if (match !== null) {
      prefixedLines++;
      // NFC: `José` typed precomposed or as `e` + accent is one speaker, not two.
      const name = (match[1] as string).normalize('NFC').toLowerCase();
      const named = DIRECT.get(name);
      if (named !== undefined) direct = true;
      if (!nameRepeated) {
        if (namesSeen.has(name)) nameRepeated = true;
        else namesSeen.add(name);
      }
      speaker = named ?? names.get(name);
      if (speaker === undefined) {
        const free: Speaker | undefined = !taken.has('user1') ? 'user1' : !taken.has('user2') ? 'user2' : undefined;
        if (free !== undefined) {
          names.set(name, free);
          speaker = free;
        }
      }
    }
    if (speaker !== undefined && match !== null) {
      prefixed = true;
      taken.add(speaker);
      current = { speaker, parts: [line.slice(match[0].length)], line: index };
      raw.push(current);
    } else if (current !== undefined) {
      // No prefix, or a third distinct name: the line continues the previous turn as plain text.
      current.parts.push(line);
    } else {
      current = { speaker: 'user1', parts: [line], line: index };
      raw.push(current);
    }
  }

  if (!prefixed || (!direct && !nameRepeated && prefixedLines < MIN_PREFIXED_SHARE * nonEmptyLines)) return flatTurns(lines);
  const turns: ParsedTurn[] = [];
  for (const t of raw) {
    const body = (t.parts.length === 1 ? (t.parts[0] as string) : t.parts.join('\n')).trim();
    if (body.length > 0) turns.push({ speaker: t.speaker, text: body, line: t.line });
  }
  return turns;
}

function flatTurns(lines: readonly string[]): ParsedTurn[] {
  const turns: ParsedTurn[] = [];
  for (let index = 0; index < lines.length; index++) {
    const body = (lines[index] as string).trim();
    if (body.length > 0) turns.push({ speaker: 'unknown', text: body, line: index });
  }
  return turns;
}

/** Lines as parseTurns splits them (`\n`, `\r\n` or `\r`): where v2 puts one message per line. */
export function countLines(text: string): number {
  let n = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) n++;
    else if (c === 13) {
      n++;
      if (text.charCodeAt(i + 1) === 10) i++;
    }
  }
  return n;
}
