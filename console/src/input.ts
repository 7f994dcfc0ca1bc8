// What a reviewer pastes or drops, read into what the API takes. Pure (no DOM): test/console/ runs it
// in Node. Speaker turns are read by the appliance's own parser (src/scoring/conversation.ts, bundled
// into the page), so the console and the service never disagree about who said what.
import { parseTurns } from '../../src/scoring/conversation.ts';
import type { Ages, BatchItem, Message, TurnSpeaker } from './types.ts';

export class InputError extends Error {
  override name = 'InputError';
}

/** A pasted chat: text for v1 (the appliance parses it), or a /v2 messages array. */
export type ChatInput = { kind: 'text'; conversation: string; ages: Ages } | { kind: 'messages'; messages: Message[]; ages: Ages };

/** A message as the one-chat view shows it: who, what, and (v1) the line its turn starts on. */
export interface ShownMessage {
  user: TurnSpeaker;
  text: string;
  line?: number;
}

const AGE_FIELDS = ['age_a', 'age_b'] as const;

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Messages of a /v2 body, or a reason they are not. */
function messagesOf(x: unknown, where: string): Message[] {
  if (!Array.isArray(x) || x.length === 0) throw new InputError(`${where}: "messages" must be a non-empty array`);
  return x.map((m: unknown, i) => {
    if (!isRecord(m) || (m.user !== 'user1' && m.user !== 'user2') || typeof m.text !== 'string') {
      throw new InputError(`${where}: messages[${i}] must be {"user": "user1" or "user2", "text": "..."}`);
    }
    return { user: m.user, text: m.text, ...(typeof m.timestamp === 'string' ? { timestamp: m.timestamp } : {}) };
  });
}

function agesOf(x: Record<string, unknown>, where: string): Ages {
  const ages: Ages = {};
  for (const field of AGE_FIELDS) {
    const v = x[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new InputError(`${where}: ${field} must be a string ("34", "13-15", "minor", "adult")`);
    ages[field] = v;
  }
  return ages;
}

/** The typed ages, empty fields left out, over any in a pasted /v2 body. */
export function mergeAges(fromBody: Ages, typed: Ages): Ages {
  const out: Ages = { ...fromBody };
  for (const field of AGE_FIELDS) {
    const v = typed[field]?.trim();
    if (v !== undefined && v !== '') out[field] = v;
  }
  return out;
}

/**
 * The chat box: JSON that is an array (the `messages` array) or an object (a /v2 body) is read as
 * /v2 messages; anything else is conversation text.
 */
export function readChatInput(pasted: string, typedAges: Ages): ChatInput {
  const text = pasted.trim();
  if (text === '') throw new InputError('Paste a conversation first.');
  if (text.startsWith('[') || text.startsWith('{')) {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (Array.isArray(json)) return { kind: 'messages', messages: messagesOf(json, 'The messages array'), ages: mergeAges({}, typedAges) };
    if (isRecord(json)) {
      return { kind: 'messages', messages: messagesOf(json.messages, 'The /v2 body'), ages: mergeAges(agesOf(json, 'The /v2 body'), typedAges) };
    }
  }
  return { kind: 'text', conversation: pasted, ages: mergeAges({}, typedAges) };
}

/** The turns of a conversation as the appliance reads them; a v1 explanation has one entry per turn. */
export function turnsOfText(conversation: string): ShownMessage[] {
  return parseTurns(conversation).map((t) => ({ user: t.speaker, text: t.text, line: t.line }));
}

/** A chat of a file: the job item, and the messages to show when its row is opened. */
export interface FileChat {
  item: BatchItem;
  /** The line of the file it came from, 1-based. */
  line: number;
}

export interface ReadFile {
  chats: FileChat[];
  /** Lines that cannot be sent, with why; the rest of the file is still scored. */
  refused: Array<{ line: number; reason: string }>;
}

/** Longest caller id the API takes (docs/api-v2.md). */
const MAX_ID_CHARS = 256;

/**
 * A JSONL file: each non-blank line a /v2 batch item (`{"id"?, "messages", "age_a"?, "age_b"?}`; other
 * fields are left out) or one conversation string, split into messages by the appliance's parser. A
 * line with no id gets `line-<n>`. /v2 takes user1 and user2 only, so a conversation with no speaker
 * prefix anywhere (flat text, whose speaker is unknown) cannot go into a job: it is refused with why.
 */
export function readJsonl(content: string): ReadFile {
  const chats: FileChat[] = [];
  const refused: ReadFile['refused'] = [];
  const seen = new Map<string, number>();
  const lines = content.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] as string).trim();
    if (raw === '') continue;
    const line = i + 1;
    try {
      const item = itemOf(raw, line);
      const earlier = seen.get(item.id);
      if (earlier !== undefined) throw new InputError(`id ${JSON.stringify(item.id)} is already used on line ${earlier}`);
      seen.set(item.id, line);
      chats.push({ item, line });
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      refused.push({ line, reason: err.message });
    }
  }
  return { chats, refused };
}

function itemOf(raw: string, line: number): BatchItem {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new InputError('not valid JSON');
  }
  if (typeof json === 'string') {
    const turns = parseTurns(json);
    if (turns.length === 0) throw new InputError('the conversation is empty');
    if (turns.some((t) => t.speaker === 'unknown')) {
      throw new InputError('no speaker prefixes (user1: / user2: or names; a few label: lines in flat text are none), and a /v2 job needs them; score it under One chat instead');
    }
    return { id: `line-${line}`, messages: turns.map((t) => ({ user: t.speaker === 'user2' ? 'user2' : 'user1', text: t.text })), explain: true };
  }
  if (!isRecord(json)) throw new InputError('neither a conversation string nor an object with "messages"');
  const id = json.id === undefined ? `line-${line}` : json.id;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_CHARS) throw new InputError(`"id" must be a string of 1 to ${MAX_ID_CHARS} characters`);
  return { id, messages: messagesOf(json.messages, 'the item'), ...agesOf(json, 'the item'), explain: true };
}
