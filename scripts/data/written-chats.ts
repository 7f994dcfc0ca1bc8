// Chats written blind for the train split, as files of one JSON chat a line (`writer-K.jsonl`, in the
// writers' sides A and B): how they are read and how each becomes training records. The relationship
// windows (written-windows.ts) and the strangers' first contacts (written-contacts.ts) are two sets of
// them, each with its own folder, brief and recipe settings.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flatten } from './recut.ts';
import { sideAsPredator, sidesAsConversation, type LabeledConversation, type WrittenSide } from './record.ts';

/** One chat as the writers wrote it: sides A and B, A rendered as user1. */
export interface WrittenChat {
  pair: string;
  label: 0 | 1;
  /** The adult's side of a harmful chat; `neither` for a benign one. */
  predator: WrittenSide | 'neither';
  turns: Array<[WrittenSide, string]>;
}

/** A chat with where it came from: `writer-K.jsonl` gives `K` as the writer, and its line (0-based) the index. */
export type PlacedChat = WrittenChat & { writer: number; index: number };

/** Every chat of a folder, writer by writer, in file order. */
export function loadWrittenChats(dir: string): PlacedChat[] {
  return readdirSync(dir)
    .flatMap((f) => {
      const writer = /^writer-(\d+)\.jsonl$/.exec(f)?.[1];
      return writer === undefined ? [] : [{ f, writer: Number(writer) }];
    })
    .sort((a, b) => a.writer - b.writer)
    .flatMap(({ f, writer }) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l, index) => ({ ...(JSON.parse(l) as WrittenChat), writer, index })),
    );
}

/**
 * Each chat `copies` times as a training record (`split: 'train'`), then `flatCopies` times more as flat
 * text (tagged `flat`, as the generator tags its flat excerpts), ids `written-<kind>-<writer>-<index>-<copy>`
 * and family `written_<kind>`: a few hundred chats among some seventy thousand teach little once each,
 * and the copies with speakers teach the flat reading only through training's views, while moderators
 * export excerpts flat. Token dropout and the re-cut views make the copies differ in training.
 */
export function writtenRecords(kind: 'window' | 'contact', chats: readonly PlacedChat[], copies: number, flatCopies: number): LabeledConversation[] {
  for (const [name, n] of [['copies', copies], ['flat copies', flatCopies]] as const) {
    if (!Number.isInteger(n) || n < 0) throw new Error(`written ${kind}s: a whole number of ${name}, not ${n}`);
  }
  const out: LabeledConversation[] = [];
  for (const w of chats) {
    const conversation = sidesAsConversation(w.turns);
    const predator = sideAsPredator(w.predator);
    const base = { label: w.label, predator, family: `written_${kind}`, split: 'train', source: 'written' } as const;
    for (let c = 0; c < copies; c++) out.push({ id: `written-${kind}-${w.writer}-${w.index}-${c}`, conversation, ...base });
    for (let c = 0; c < flatCopies; c++) out.push({ id: `written-${kind}-${w.writer}-${w.index}-flat-${c}`, conversation: flatten(conversation), ...base, tags: ['flat'] });
  }
  return out;
}
