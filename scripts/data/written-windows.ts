// Whole relationship windows written blind, for the train split only (corpus.ts --written-windows COPIES
// and --written-windows-flat COPIES; train.sh's recipe settings WRITTEN_WINDOWS and WRITTEN_WINDOWS_FLAT,
// 3 each since 3.16.0, so these files stay as 3.16.0 read them: a test holds their hash). The generator
// builds a courtship from its banks' short lines, so the network learns courtships by their familiar
// lines; lines written blind for the banks (phrases-written.ts) were recombined by the generator and
// taught the network where natural text sits rather than how a courtship reads (docs/training.md, runs
// 114 to 117). These windows keep the writers' company whole: who speaks of school and a bedtime, who of
// a shift and a flat, and the affection between them.
//
// Eight writers (subagents; four on December 6 2026, four on December 7) wrote 50 windows each from one
// brief: the account of the misses (a courtship under way, read as affection and everyday care)
// and of the benign twins (adult partners, teenagers, a parent or relative caring for a child, friends),
// the content rules (nothing sexual involving a minor; the harm is in the pattern) and a voice each. They
// read no file of the repository. Two writers (1 and 6) declined the harmful half and wrote their 25
// benign windows only. Windows sharing a run of six words with any excerpt of the evaluation's written
// sets were dropped whole, and lines sharing a run of four words with a held-out phrasing of a generator
// bank, or holding one of three words or more whole, were dropped from their window;
// test/model/data-written-windows.test.ts holds the files to both rules.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flatten } from './recut.ts';
import { sideAsPredator, sidesAsConversation, type LabeledConversation, type WrittenSide } from './record.ts';

export const WRITTEN_WINDOWS_DIR = join(import.meta.dirname, 'written-windows');

/** One window as the writers wrote it: sides A and B, A rendered as user1. */
export interface WrittenWindow {
  pair: string;
  label: 0 | 1;
  /** The adult's side of a harmful window; `neither` for a benign one. */
  predator: WrittenSide | 'neither';
  turns: Array<[WrittenSide, string]>;
}

/** Every window, writer by writer, in file order: `writer-K.jsonl` gives `K` as the writer. */
export function loadWrittenWindows(dir = WRITTEN_WINDOWS_DIR): Array<WrittenWindow & { writer: number; index: number }> {
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
        .map((l, index) => ({ ...(JSON.parse(l) as WrittenWindow), writer, index })),
    );
}

/**
 * Each window `copies` times as a training record (`split: 'train'`), then `flatCopies` times more as
 * flat text (tagged `flat`, as the generator tags its flat excerpts): 262 windows among some seventy
 * thousand chats teach little once each, and the copies with speakers teach the flat reading only
 * through training's views, while moderators export excerpts flat. Token dropout and the re-cut views
 * make the copies differ in training.
 */
export function writtenWindowRecords(copies: number, flatCopies = 0, dir = WRITTEN_WINDOWS_DIR): LabeledConversation[] {
  for (const [name, n] of [['copies', copies], ['flat copies', flatCopies]] as const) {
    if (!Number.isInteger(n) || n < 0) throw new Error(`written windows: a whole number of ${name}, not ${n}`);
  }
  const out: LabeledConversation[] = [];
  for (const w of loadWrittenWindows(dir)) {
    const conversation = sidesAsConversation(w.turns);
    const predator = sideAsPredator(w.predator);
    const base = { label: w.label, predator, family: 'written_window', split: 'train', source: 'written' } as const;
    for (let c = 0; c < copies; c++) out.push({ id: `written-window-${w.writer}-${w.index}-${c}`, conversation, ...base });
    for (let c = 0; c < flatCopies; c++) out.push({ id: `written-window-${w.writer}-${w.index}-flat-${c}`, conversation: flatten(conversation), ...base, tags: ['flat'] });
  }
  return out;
}
