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

import { join } from 'node:path';
import type { LabeledConversation } from './record.ts';
import { loadWrittenChats, writtenRecords, type PlacedChat } from './written-chats.ts';

export const WRITTEN_WINDOWS_DIR = join(import.meta.dirname, 'written-windows');

/** Every window, writer by writer, in file order (written-chats.ts). */
export function loadWrittenWindows(dir = WRITTEN_WINDOWS_DIR): PlacedChat[] {
  return loadWrittenChats(dir);
}

/**
 * Each window `copies` times with speakers, then `flatCopies` times flat (written-chats.ts writtenRecords):
 * 262 windows among some seventy thousand chats teach little once each, and moderators export excerpts flat.
 */
export function writtenWindowRecords(copies: number, flatCopies = 0, dir = WRITTEN_WINDOWS_DIR): LabeledConversation[] {
  return writtenRecords('window', loadWrittenWindows(dir), copies, flatCopies);
}
