// Loaders that build two-party benign chats in texting and chat register from two real sets in
// ../shared/data (read in place, never copied). Neither set holds two-party chats as it stands, so
// the chats are assembled here; the model card must say how, and name the sets with their licences:
//
// SMS Spam Collection v.1 (Almeida, Gómez Hidalgo, Yamakami, DocEng 2011; free use with the authors'
// copyright kept, listed by UCI under CC BY 4.0): real personal texts, but single messages from many
// unrelated senders. loadSmsChats builds a chat like this:
//   1. Only `ham` lines are read; `spam` is never used. Blank messages are dropped, and so is every
//      repeat of a text already seen (the file holds, e.g., 30 copies of "Sorry, I'll call later"),
//      so the same text cannot sit in both train and test.
//   2. The collection's HTML entities are decoded; its anonymisation placeholders `<#>`, `<DECIMAL>`
//      and `<TIME>` become seeded plausible values (a number, a price, a clock time), because a
//      placeholder token that only benign chats carry would teach the model a cue for the class.
//      The 4 messages with `<URL>` or `<EMAIL>` are dropped instead (no value reads naturally there).
//   3. The remaining messages are walked in file order and cut into consecutive chunks whose sizes
//      are drawn from one seeded stream (SMS_CHUNK.min to SMS_CHUNK.max); a final chunk shorter than
//      SMS_CHUNK.min is dropped. One chunk is one chat; its id is `sms-<chunk index>`.
//   4. Within a chat the first message is user1's; each later message is sent by the same speaker as
//      the one before with chance SMS_SAME_SPEAKER (never three in a row) and otherwise by the other
//      one, and the last message goes to the other speaker if only one has spoken, so every chat has
//      two speakers. Most chats call them user1/user2, SMS_FIRST_NAME_SHARE uses two first names.
// The pairing is artificial: neighbouring lines of the file were not written to each other, so these
// chats teach the register of real texting (abbreviations, dropped punctuation, Singlish particles,
// adults flirting and making plans), never real turn-taking or topic flow.
//
// irc-disentanglement (Kummerfeld et al., ACL 2019, CC BY 4.0; the #ubuntu logs are public domain):
// real, messy multi-party chat with annotated reply links. loadIrcChats builds chats like this:
//   1. Each day's `.raw.txt` is read line by line, keeping the 0-based line numbers the annotation
//      uses. Only `[HH:MM] <nick> text` lines with text are messages; `===` lines (joins, parts,
//      renames, old-style actions), `* nick` actions and `-nick-` notices are not. A rename
//      (`=== a is now known as b`) keeps b the same person as a until someone joins as b.
//   2. Every link `A B -` in the day's `.annotation.txt` between two messages joins them into one
//      thread (union-find: a thread is a connected component of the reply graph, as in the paper).
//      Only lines from 1,000 on are annotated, so a thread that reaches back before line 1,000 may
//      miss some of its early messages; the kept ones still read as the start of an excerpt.
//   3. Messages of the channel's bots (IRC_BOTS: ubotu, ubottu, FloodBot) are dropped from a thread:
//      they are no party to a two-person chat.
//   4. A thread whose remaining messages come from exactly two people is kept whole. In a thread of
//      three or more, the longest run of consecutive thread messages (in time order) with exactly
//      two people is kept instead; the earliest such run wins a tie. Either way it needs at least
//      IRC_MIN_MESSAGES messages. Three-or-more-person threads are common in #ubuntu (a second helper
//      chimes in), and the two-person run between interruptions is a real exchange.
//   5. Lines are `name: text` in log order, text as typed (addressing prefixes such as `bob: try
//      this` stay: real chat keeps them). The first speaker is user1. A share (IRC_NICK_SHARE) keeps
//      the two nicks as speaker names, cleaned to the characters the API's speaker prefix accepts;
//      the rest, and any pair that would not parse back as two distinct speakers, use user1/user2.
//   6. Splits go by DAY, not by chat (a hash of the day, IRC_SPLIT), so whole days are held out: the
//      real evaluation runs on IRC days we do not have, and chats of one day share people and topics.
//      Ids are `irc-<day>-<n>`, n counting the day's chats from 0 in order of their first message.
//
// Both loaders are deterministic (every random choice is seeded from fixed strings or the id) and
// return records as the other real loaders do: label 0, predator 'neither', ages on a share.

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseTurns } from '../../src/scoring/conversation.ts';
import { DEFAULT_DATA_DIR, oneLine, realChat, splitByHash } from './real.ts';
import type { LabeledConversation, Split } from './record.ts';
import { createRng, hash32, type Rng } from './rng.ts';

export interface TextingOptions {
  /** Stop after this many chats (the first ones of the full run, in the same order). */
  limit?: number;
}

/** Chunk sizes of an SMS chat, in messages (inclusive). */
export const SMS_CHUNK = { min: 2, max: 14 } as const;
/** Chance that an SMS is sent by the same speaker as the message before it. */
export const SMS_SAME_SPEAKER = 0.25;
/** Share of SMS chats whose speakers have first names instead of user1/user2. */
export const SMS_FIRST_NAME_SHARE = 0.3;
/** Train/val percentages; the rest is test. */
export const SMS_SPLIT = { train: 78, val: 11 } as const;
export const IRC_SPLIT = { train: 78, val: 11 } as const;
/** Fewest messages in an IRC chat. */
export const IRC_MIN_MESSAGES = 3;
/** Share of IRC chats that keep the real nicks as speaker names. */
export const IRC_NICK_SHARE = 0.45;
/** #ubuntu's bots: their factoids and flood warnings are not one side of a two-person chat. */
export const IRC_BOTS: RegExp = /^(ubot+u|ubot\d+|floodbot\d*)$/i;

// Short, common names of the collection's places (UK and Singapore), all distinct when lowercased.
const FIRST_NAMES = ['Sam', 'Jess', 'Wei', 'Priya', 'Tom', 'Mei', 'Alex', 'Raj', 'Kate', 'Ben', 'Lisa', 'Jun', 'Dan', 'Amy', 'Hui', 'Nick', 'Chris', 'Siti'];

/** A real benign chat as real.ts makes one (ages on a share), under its own family and tag. */
function benignChat(id: string, lines: readonly string[], source: string, family: string, split: Split, tag: string): LabeledConversation {
  return { ...realChat(id, lines, source, split), family, tags: [tag] };
}

/** The speakers parseTurns reads from `lines`, or undefined where a line does not start a turn of its own. */
function parsedSpeakers(lines: readonly string[]): string[] | undefined {
  const turns = parseTurns(lines.join('\n'));
  if (turns.length !== lines.length || turns.some((t, i) => t.line !== i)) return undefined;
  return turns.map((t) => t.speaker);
}

// ---- SMS Spam Collection ----------------------------------------------------------------------

const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&amp;': '&', '&quot;': '"', '&apos;': "'" };

function smsNumber(rng: Rng): string {
  const f = rng.next();
  return String(f < 0.6 ? rng.int(1, 20) : f < 0.9 ? rng.int(20, 99) : rng.int(100, 999));
}

const decode = (raw: string): string => oneLine(raw.replace(/&(lt|gt|amp|quot|apos);/g, (m) => ENTITIES[m] ?? m));

/** A ham text as a person typed it: entities decoded, placeholders filled from the chat's stream. */
function smsText(raw: string, rng: Rng): string {
  return decode(raw)
    .replace(/<#>/g, () => smsNumber(rng))
    .replace(/<DECIMAL>/g, () => `${rng.int(1, 49)}.${String(rng.int(0, 99)).padStart(2, '0')}`)
    .replace(/<TIME>/g, () => `${rng.int(1, 12)}:${rng.pick(['00', '15', '30', '45'])}`);
}

/** Ham messages in file order, first copies only, without those no value can fill; other placeholders stay (filled per chat). */
function hamMessages(dataDir: string): string[] {
  const text = readFileSync(join(dataDir, 'sms-spam-collection', 'SMSSpamCollection'), 'utf8');
  const seen = new Set<string>();
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const tab = line.indexOf('\t');
    if (tab < 0 || line.slice(0, tab) !== 'ham') continue;
    const message = line.slice(tab + 1);
    const key = decode(message);
    if (key === '' || /<(URL|EMAIL)>/.test(key) || seen.has(key)) continue;
    seen.add(key);
    out.push(message);
  }
  return out;
}

/** Which side (0 or 1) sends each of n >= 2 messages; both sides send, never three in a row. */
function smsSides(n: number, rng: Rng): number[] {
  const sides = [0];
  for (let k = 1; k < n; k++) {
    const prev = sides[k - 1] as number;
    const repeatedAlready = k >= 2 && sides[k - 2] === prev;
    const onlyOneSoFar = sides.every((s) => s === prev);
    const lastChance = k === n - 1 && onlyOneSoFar;
    sides.push(!repeatedAlready && !lastChance && rng.chance(SMS_SAME_SPEAKER) ? prev : 1 - prev);
  }
  return sides;
}

/**
 * Two-party texting chats built from the SMS Spam Collection's ham messages (see the header for the
 * exact rules): source 'sms-spam-collection', family 'sms', tag 'sms', split 78/11/11 by a hash of the id.
 */
export function loadSmsChats(dataDir = DEFAULT_DATA_DIR, options: TextingOptions = {}): LabeledConversation[] {
  const limit = options.limit ?? Infinity;
  const messages = hamMessages(dataDir);
  // One stream for the cuts alone, so a chat's own draws never move where the next chat starts.
  const cuts = createRng(hash32('sms-spam-collection:chunks'));
  const out: LabeledConversation[] = [];
  for (let index = 0, start = 0; out.length < limit && start < messages.length; index++) {
    const chunk = messages.slice(start, start + cuts.int(SMS_CHUNK.min, SMS_CHUNK.max));
    start += chunk.length;
    if (chunk.length < SMS_CHUNK.min) break;
    const id = `sms-${index}`;
    const rng = createRng(hash32(`sms-chat:${id}`));
    const texts = chunk.map((m) => smsText(m, rng));
    let names: [string, string] = ['user1', 'user2'];
    if (rng.chance(SMS_FIRST_NAME_SHARE)) {
      const a = rng.pick(FIRST_NAMES);
      names = [a, rng.pick(FIRST_NAMES.filter((n) => n !== a))];
    }
    const sides = smsSides(texts.length, rng);
    const lines = texts.map((t, k) => `${names[sides[k] as number]}: ${t}`);
    out.push(benignChat(id, lines, 'sms-spam-collection', 'sms', splitByHash(id, SMS_SPLIT.train, SMS_SPLIT.val), 'sms'));
  }
  return out;
}

// ---- IRC disentanglement (#ubuntu) -------------------------------------------------------------

export interface IrcMessage {
  /** 0-based line in the day's `.raw.txt`, as the annotation counts. */
  line: number;
  nick: string;
  /** The nick's person: the nick it had before any renames since it joined. */
  person: string;
  text: string;
}

const MESSAGE = /^\[\d\d:\d\d\] <([^>]+)> ?(.*)$/;
const RENAME = /^=== (\S+) is now known as (\S+)\s*$/;
const JOIN = /^=== (\S+) \[[^\]]*\]\s+has joined /;

/** A day's messages (system lines, actions and empty messages left out), numbered by raw line. */
export function parseIrcRaw(raw: string): IrcMessage[] {
  const alias = new Map<string, string>();
  const personOf = (nick: string): string => alias.get(nick) ?? nick;
  const out: IrcMessage[] = [];
  const lines = raw.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).replace(/\r$/, '');
    if (line.startsWith('===')) {
      const rename = RENAME.exec(line);
      if (rename) alias.set(rename[2] as string, personOf(rename[1] as string));
      const join = JOIN.exec(line);
      if (join) alias.delete(join[1] as string);
      continue;
    }
    const m = MESSAGE.exec(line);
    if (!m) continue;
    const text = oneLine(m[2] as string);
    if (text === '') continue;
    const nick = m[1] as string;
    out.push({ line: i, nick, person: personOf(nick), text });
  }
  return out;
}

/** Reply links `A B -` as line pairs. */
export function parseIrcAnnotation(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\b/.exec(line);
    if (m) out.push([Number(m[1]), Number(m[2])]);
  }
  return out;
}

/** Threads: connected components of the reply links among messages, each in log order, ordered by first message. */
export function ircThreads(messages: readonly IrcMessage[], links: ReadonlyArray<readonly [number, number]>): IrcMessage[][] {
  const at = new Map<number, number>();
  messages.forEach((m, i) => at.set(m.line, i));
  const parent = messages.map((_, i) => i);
  const find = (i: number): number => {
    let r = i;
    while (parent[r] !== r) r = parent[r] as number;
    while (parent[i] !== r) {
      const next = parent[i] as number;
      parent[i] = r;
      i = next;
    }
    return r;
  };
  for (const [a, b] of links) {
    const ia = at.get(a);
    const ib = at.get(b);
    // A link to a system line joins nothing: such lines are no part of anyone's exchange.
    if (ia === undefined || ib === undefined) continue;
    const ra = find(ia);
    const rb = find(ib);
    // The smaller root wins so that a thread's root is its first message, whatever the link order.
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
  const groups = new Map<number, IrcMessage[]>();
  messages.forEach((m, i) => {
    const r = find(i);
    const g = groups.get(r);
    if (g) g.push(m);
    else groups.set(r, [m]);
  });
  return [...groups.entries()].sort((x, y) => x[0] - y[0]).map(([, g]) => g);
}

/** The two-person exchange kept from a thread (see the header, step 4), or undefined. */
export function twoPersonRun(thread: readonly IrcMessage[], minMessages = IRC_MIN_MESSAGES): IrcMessage[] | undefined {
  const human = thread.filter((m) => !IRC_BOTS.test(m.nick));
  let best: [number, number] | undefined;
  // Sliding window: the longest stretch with at most two people, counted per person.
  let lo = 0;
  const count = new Map<string, number>();
  for (let hi = 0; hi < human.length; hi++) {
    const p = (human[hi] as IrcMessage).person;
    count.set(p, (count.get(p) ?? 0) + 1);
    while (count.size > 2) {
      const q = (human[lo] as IrcMessage).person;
      const c = (count.get(q) as number) - 1;
      if (c === 0) count.delete(q);
      else count.set(q, c);
      lo++;
    }
    if (count.size === 2 && (best === undefined || hi + 1 - lo > best[1] - best[0])) best = [lo, hi + 1];
  }
  if (best === undefined || best[1] - best[0] < minMessages) return undefined;
  return human.slice(best[0], best[1]);
}

/** Speaker names the API's prefix accepts: letters, digits, `_`, `.`, `-` and spaces, led by a letter, digit or `_`. */
function cleanNick(nick: string): string {
  return nick
    .replace(/[^\p{L}\p{M}\p{N}_ .-]/gu, '')
    .replace(/^[^\p{L}\p{N}_]+/u, '')
    .trim()
    .slice(0, 32)
    .trim();
}

/** `name: text` lines; the nicks where this chat keeps them and they parse back as its two speakers. */
function ircLines(run: readonly IrcMessage[], keepNicks: boolean): string[] {
  const first = (run[0] as IrcMessage).person;
  const generic = run.map((m) => `${m.person === first ? 'user1' : 'user2'}: ${m.text}`);
  if (!keepNicks) return generic;
  // A person keeps the first nick they use in the exchange, so a rename mid-chat does not add a speaker.
  const nameOf = new Map<string, string>();
  for (const m of run) if (!nameOf.has(m.person)) nameOf.set(m.person, cleanNick(m.nick));
  const names = [...nameOf.values()];
  if (names.some((n) => n === '') || names[0]?.toLowerCase() === names[1]?.toLowerCase()) return generic;
  const lines = run.map((m) => `${nameOf.get(m.person) as string}: ${m.text}`);
  const parsed = parsedSpeakers(lines);
  const expected = run.map((m) => (m.person === first ? 'user1' : 'user2'));
  return parsed !== undefined && parsed.every((s, i) => s === expected[i]) ? lines : generic;
}

/** `YYYY-MM-DD` of a day file such as `2004-12-25.train-c.raw.txt`. */
function dayOf(file: string): string {
  return file.split('.')[0] as string;
}

/**
 * Two-person exchanges pulled out of #ubuntu IRC by the annotated reply links (see the header for the
 * exact rules): source 'irc-ubuntu', family 'irc', tag 'irc', split 78/11/11 by a hash of the DAY.
 */
export function loadIrcChats(dataDir = DEFAULT_DATA_DIR, options: TextingOptions = {}): LabeledConversation[] {
  const limit = options.limit ?? Infinity;
  const dir = join(dataDir, 'irc-disentanglement', 'train');
  const raws = readdirSync(dir)
    .filter((f) => f.endsWith('.raw.txt'))
    .sort();
  const out: LabeledConversation[] = [];
  for (const file of raws) {
    if (out.length >= limit) break;
    const day = dayOf(file);
    const split = splitByHash(`irc-day:${day}`, IRC_SPLIT.train, IRC_SPLIT.val);
    const messages = parseIrcRaw(readFileSync(join(dir, file), 'utf8'));
    const links = parseIrcAnnotation(readFileSync(join(dir, file.replace(/\.raw\.txt$/, '.annotation.txt')), 'utf8'));
    const runs = ircThreads(messages, links)
      .map((t) => twoPersonRun(t))
      .filter((r): r is IrcMessage[] => r !== undefined)
      .sort((a, b) => (a[0] as IrcMessage).line - (b[0] as IrcMessage).line);
    for (const [n, run] of runs.entries()) {
      if (out.length >= limit) break;
      const id = `irc-${day}-${n}`;
      const keepNicks = createRng(hash32(`irc-names:${id}`)).chance(IRC_NICK_SHARE);
      out.push(benignChat(id, ircLines(run, keepNicks), 'irc-ubuntu', 'irc', split, 'irc'));
    }
  }
  return out;
}
