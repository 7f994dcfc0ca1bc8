// First contacts between strangers written blind, for the train split only (corpus.ts --written-contacts
// COPIES and --written-contacts-flat COPIES; train.sh's recipe settings WRITTEN_CONTACTS and
// WRITTEN_CONTACTS_FLAT, 3 each since 3.17.0, so these files stay as 3.17.0 read them: a test holds their
// hash). The relationship windows written blind (written-windows.ts) moved the written sets' courtships;
// these are the same idea for the other failure kind, strangers' first contact, whose generated families
// (contact.ts) the corpus holds in both classes
// but in the generator's own register: the age/sex/location ritual, a stated teenage age and flirting
// between peers or adults are benign, and an adult who learns the other is a child and goes on is not.
//
// Six writers (subagents, December 7 2026) wrote 60 chats each, half of each label, from one brief
// (written-contacts/BRIEF.md, with each writer's voice) and read no file of the repository. Chats
// sharing a run of six words with any excerpt of the evaluation's written sets, the held-back one
// included, were dropped whole, and lines sharing a run of four words with a held-out phrasing of a
// generator bank, or holding one of three words or more whole, were dropped from their chat;
// test/model/data-written-contacts.test.ts holds the files to both rules.

import { join } from 'node:path';
import type { LabeledConversation } from './record.ts';
import { loadWrittenChats, writtenRecords, type PlacedChat } from './written-chats.ts';

export const WRITTEN_CONTACTS_DIR = join(import.meta.dirname, 'written-contacts');

/** Every first contact, writer by writer, in file order (written-chats.ts). */
export function loadWrittenContacts(dir = WRITTEN_CONTACTS_DIR): PlacedChat[] {
  return loadWrittenChats(dir);
}

/** Each first contact `copies` times with speakers, then `flatCopies` times flat (written-chats.ts writtenRecords). */
export function writtenContactRecords(copies: number, flatCopies = 0, dir = WRITTEN_CONTACTS_DIR): LabeledConversation[] {
  return writtenRecords('contact', loadWrittenContacts(dir), copies, flatCopies);
}
