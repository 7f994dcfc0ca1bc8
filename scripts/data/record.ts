// The labeled-conversation record every data source (generator, real chats, importers) produces.

export type Split = 'train' | 'val' | 'test';
export type PredatorLabel = 'user1' | 'user2' | 'neither';

export interface LabeledConversation {
  id: string;
  /** Text in the API's format: one `name: text` turn per line. */
  conversation: string;
  label: 0 | 1;
  predator: PredatorLabel;
  age_a?: string;
  age_b?: string;
  /** Scenario family (generator) or corpus name (real data, imports). */
  family: string;
  split: Split;
  /** generator | topical-chat | synthetic-persona-chat | casino | self-dialogue | pan12 | jsonl */
  source: string;
  /**
   * How this record was rendered, for slicing the evaluation: e.g. `flat`, `excerpt`, `short`, `long`,
   * `register-shift`, `in-kind`. Never read by training.
   */
  tags?: string[];
  /**
   * Harmful generated records whose lines survive rendering (not flat, not re-cut): the 0-based line of
   * `conversation` where the first predatory move begins. Every earlier prefix is benign, as an excerpt
   * without a predatory move is; training reads it to teach the running score where the harm starts.
   */
  onset_line?: number;
  /**
   * Generated records built with DataSwitches.sideAges: the true ages of user1 and user2, stated in
   * the request or not. Training's side-age loss reads them (export.ts, train.py --side-ages); the
   * service never sees them.
   */
  side_ages?: [number, number];
}

/** A side of a two-party window as people writing chats for the project name it (written windows, written excerpts). */
export type WrittenSide = 'A' | 'B';

/** Such a window's turns in the API's text form, A speaking as user1 and B as user2. */
export function sidesAsConversation(turns: ReadonlyArray<readonly [WrittenSide, string]>): string {
  return turns.map(([side, text]) => `${side === 'A' ? 'user1' : 'user2'}: ${text}`).join('\n');
}

/** The predator label of such a window: its adult's side as that side speaks, or neither. */
export function sideAsPredator(side: WrittenSide | 'neither'): PredatorLabel {
  return side === 'A' ? 'user1' : side === 'B' ? 'user2' : 'neither';
}

export function toJsonl(records: Iterable<LabeledConversation>): string {
  let out = '';
  for (const r of records) out += JSON.stringify(r) + '\n';
  return out;
}

export function parseJsonl<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}
