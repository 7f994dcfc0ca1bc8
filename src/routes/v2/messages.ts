// v2 messages -> the `speaker: text` line format the engine parses (docs/model-contract.md, step 1).
import type { Speaker } from '../../scoring/types.ts';

export interface Message {
  user: Speaker;
  text: string;
  /** ISO-8601 date-time; validated, not used by the current model (array order is turn order). */
  timestamp?: string;
}

/**
 * Every line break the engine splits on (and the Unicode ones, so a later parser change cannot open
 * a hole). Inside a message they become a space: a line break followed by `user2:` in user1's text
 * would otherwise start a turn for user2, letting one party's words be attributed to the other.
 */
const LINE_BREAKS = /\r\n|[\r\n\u0085\u2028\u2029]/g;

export function messagesToConversation(messages: readonly Message[]): string {
  let out = '';
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Message;
    if (i > 0) out += '\n';
    out += `${m.user}: ${m.text.replace(LINE_BREAKS, ' ')}`;
  }
  return out;
}

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;

/** Characters of the messages' text, in code points like v1's limit (an emoji is one character). */
export function textCharacters(messages: readonly Message[]): number {
  let total = 0;
  for (const m of messages) total += m.text.length - (m.text.match(SURROGATE_PAIR)?.length ?? 0);
  return total;
}
