// Whole relationship windows written blind, for the train split only (corpus.ts --written-windows COPIES
// and --written-windows-flat COPIES; train.sh's recipe settings WRITTEN_WINDOWS and WRITTEN_WINDOWS_FLAT,
// 3 each since 3.16.0, so the first batch's files stay as 3.16.0 read them: a test holds their hash). The generator
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
//
// A second batch (written-windows-2/: six more writers, 9 to 14, on December 7, the same brief with new
// voices, each asked to avoid the stock phrases the first batch reached for) is read only where a recipe
// asks for two batches or more (WRITTEN_WINDOW_BATCHES; corpus.ts --written-window-batches 2). They
// wrote 50 windows each, half of each label, and none declined; by the same rules 85 windows were
// dropped whole for a run of six words shared with the written sets (confirmation_5 included) and 88
// lines for held-out phrasings, leaving 215 windows, 96 of them courtships (the adult on side A in 48).
//
// A third batch (written-windows-3/: writers 15 to 20, December 7, evening) is written as matched
// groups, for the misses and false alarms the seventh written set showed 3.17.0 (docs/training.md, "A
// third batch of windows"): on one everyday topic each, an adult courting a child with no named move,
// the same with one quiet move, two teenagers going out, and adult partners or a parent caring for a
// child, so that only who the two sides are, and whether the attention is romantic, tells them apart.
// Most are short (under 400 characters), as the missed excerpts were. 48 windows each, half of each
// label; a line sharing a run of six words with an evaluation excerpt was dropped from its window rather
// than the window whole (the writers never saw the sets, and whole drops would have broken 52 of the 72
// groups), as were 71 lines for held-out phrasings; two windows left too short were dropped, leaving
// 286, 142 of them courtships. Read only where a recipe asks for three batches.

import { join } from 'node:path';
import type { LabeledConversation } from './record.ts';
import { loadWrittenChats, writtenRecords, type PlacedChat } from './written-chats.ts';

/** The batches' folders, in the order they were written: writers 1 to 8 (3.16.0's), then 9 to 14, then 15 to 20. */
export const WRITTEN_WINDOW_BATCHES = [
  join(import.meta.dirname, 'written-windows'),
  join(import.meta.dirname, 'written-windows-2'),
  join(import.meta.dirname, 'written-windows-3'),
] as const;

/** Refuses a number of batches the folders do not hold (train.sh's recipe check takes the same 1 to 3). */
export function checkWindowBatches(batches: number): void {
  if (!Number.isInteger(batches) || batches < 1 || batches > WRITTEN_WINDOW_BATCHES.length) {
    throw new Error(`written windows: a number of batches from 1 to ${WRITTEN_WINDOW_BATCHES.length}, not ${batches}`);
  }
}

/** Every window of the first `batches` batches, batch by batch, writer by writer, in file order (written-chats.ts). */
export function loadWrittenWindows(batches = 1): PlacedChat[] {
  checkWindowBatches(batches);
  const byBatch = WRITTEN_WINDOW_BATCHES.slice(0, batches).map((dir) => loadWrittenChats(dir));
  // A record's id names its writer, not its batch: a writer's number in two batches would give two windows one id.
  const writers = byBatch.map((chats) => new Set(chats.map((c) => c.writer)));
  writers.forEach((own, b) => {
    const shared = [...own].filter((w) => writers.some((other, o) => o !== b && other.has(w)));
    if (shared.length > 0) throw new Error(`written windows: writer ${shared.join(', ')} in two batches`);
  });
  return byBatch.flat();
}

/**
 * Each window of the first `batches` batches `copies` times with speakers, then `flatCopies` times flat
 * (written-chats.ts writtenRecords): a few hundred windows among some seventy thousand chats teach little
 * once each, and moderators export excerpts flat.
 */
export function writtenWindowRecords(copies: number, flatCopies = 0, batches = 1): LabeledConversation[] {
  return writtenRecords('window', loadWrittenWindows(batches), copies, flatCopies);
}
