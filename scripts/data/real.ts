// Loaders for the real, licensed benign chats in ../shared/data (read in place, never copied):
// Topical-Chat (CDLA-Sharing-1.0, Amazon), Synthetic-Persona-Chat (CC BY 4.0, Google Research),
// CaSiNo (CC BY 4.0, Chawla et al.) and the Self-dialogue Corpus (BSD 3-Clause, University of
// Edinburgh). The loaders return the chats as written; renderReal gives a share of them the chat
// register and the excerpt, flat and re-cut renderings that generated chats get, with the same
// probabilities, so that style and structure are no cue for the class.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LONG_TURNS, RENDERING, SHORT_TURNS, excerptWindow, finishRendering, type DataSwitches } from './generate.ts';
import { turnsOf } from './recut.ts';
import { drawRegister, joinLines, registerLines, shiftLines, type Item } from './register.ts';
import { createRng, hash32 } from './rng.ts';
import type { LabeledConversation, Split } from './record.ts';
import type { Turn } from '../../src/scoring/types.ts';

export const DEFAULT_DATA_DIR = new URL('../../../shared/data/', import.meta.url).pathname;

/** The licensed real benign sets this module reads (record `source`); nothing else counts as a real chat. */
export const REAL_SOURCES: ReadonlySet<string> = new Set(['topical-chat', 'synthetic-persona-chat', 'casino', 'self-dialogue', 'sms-spam-collection', 'irc-ubuntu']);

interface TopicalTurn {
  message: string;
  agent: string;
}

export function splitByHash(id: string, trainPct: number, valPct: number): Split {
  const h = hash32(id) % 100;
  return h < trainPct ? 'train' : h < trainPct + valPct ? 'val' : 'test';
}

/** A benign real chat; it carries ages sometimes, so that the presence of ages is no cue for synthetic text. */
export function realChat(id: string, lines: readonly string[], source: string, split: Split): LabeledConversation {
  const record: LabeledConversation = { id, conversation: lines.join('\n'), label: 0, predator: 'neither', family: source, split, source };
  const rng = createRng(hash32(record.id));
  if (rng.chance(0.3)) {
    const age = (): string => (rng.chance(0.5) ? String(rng.int(18, 70)) : rng.pick(['adult', '25-34', '18-24', '35-50']));
    record.age_a = age();
    if (rng.chance(0.7)) record.age_b = age();
  }
  return record;
}

export const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** Topical-Chat: valid_freq and valid_rare feed train/val; test_freq is held out whole for test. */
export function loadTopicalChat(dataDir = DEFAULT_DATA_DIR): LabeledConversation[] {
  const files: Array<[string, Split | undefined]> = [
    ['valid_freq.json', undefined],
    ['valid_rare.json', undefined],
    ['test_freq.json', 'test'],
  ];
  const out: LabeledConversation[] = [];
  for (const [file, fixed] of files) {
    const data = JSON.parse(readFileSync(join(dataDir, 'topical-chat', file), 'utf8')) as Record<string, { content: TopicalTurn[] }>;
    for (const [key, conv] of Object.entries(data)) {
      const first = conv.content[0]?.agent;
      const lines = conv.content
        .filter((t) => oneLine(t.message) !== '')
        .map((t) => `${t.agent === first ? 'user1' : 'user2'}: ${oneLine(t.message)}`);
      if (lines.length === 0) continue;
      const id = `topical-${key}`;
      out.push(realChat(id, lines, 'topical-chat', fixed ?? splitByHash(id, 85, 15)));
    }
  }
  return out;
}

/** Minimal RFC 4180 CSV reader: quoted fields may hold commas, newlines and doubled quotes. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** Synthetic-Persona-Chat valid.csv: split by conversation, 70/10/20. */
export function loadPersonaChat(dataDir = DEFAULT_DATA_DIR): LabeledConversation[] {
  const rows = parseCsv(readFileSync(join(dataDir, 'synthetic-persona-chat', 'valid.csv'), 'utf8'));
  const header = rows[0] ?? [];
  const col = header.indexOf('Best Generated Conversation');
  const out: LabeledConversation[] = [];
  rows.slice(1).forEach((row, index) => {
    const text = row[col] ?? '';
    const lines: string[] = [];
    let first: string | undefined;
    for (const raw of text.split(/\r?\n/)) {
      const m = /^\s*user\s*([12])\s*:\s*(.*)$/i.exec(raw);
      // Whoever speaks first is user1, as the server would call them.
      first ??= m?.[1];
      if (m) lines.push(`${m[1] === first ? 'user1' : 'user2'}: ${oneLine(m[2] ?? '')}`);
      else if (raw.trim() !== '' && lines.length > 0) lines[lines.length - 1] += ' ' + oneLine(raw);
    }
    if (lines.length < 2) return;
    const id = `persona-${index}`;
    out.push(realChat(id, lines, 'synthetic-persona-chat', splitByHash(id, 70, 10)));
  });
  return out;
}

interface CasinoDialogue {
  dialogue_id: number | string;
  chat_logs: Array<{ text: string; id: string }>;
}

/** Interface actions of the CaSiNo negotiation UI, not messages. */
export const CASINO_ACTIONS: readonly string[] = ['Submit-Deal', 'Accept-Deal', 'Reject-Deal', 'Walk-Away'];

/** CaSiNo: casino_test.json held out whole for test; train and valid files split 85/15 by hash. */
export function loadCasino(dataDir = DEFAULT_DATA_DIR): LabeledConversation[] {
  const files: Array<[string, Split | undefined]> = [
    ['casino_train.json', undefined],
    ['casino_valid.json', undefined],
    ['casino_test.json', 'test'],
  ];
  const out: LabeledConversation[] = [];
  for (const [file, fixed] of files) {
    const data = JSON.parse(readFileSync(join(dataDir, 'casino', file), 'utf8')) as CasinoDialogue[];
    for (const d of data) {
      const turns = d.chat_logs.filter((t) => !CASINO_ACTIONS.includes(t.text.trim()) && oneLine(t.text) !== '');
      const first = turns[0]?.id;
      const lines = turns.map((t) => `${t.id === first ? 'user1' : 'user2'}: ${oneLine(t.text)}`);
      if (lines.length < 2) continue;
      const id = `casino-${file.replace(/\.json$/, '')}-${d.dialogue_id}`;
      out.push(realChat(id, lines, 'casino', fixed ?? splitByHash(id, 85, 15)));
    }
  }
  return out;
}

/** Dialogues taken from the Self-dialogue Corpus (a seeded subset: it is large and one-author). */
export const SELF_DIALOGUE_SUBSET = 3000;

/** Self-dialogue: a subset of SELF_DIALOGUE_SUBSET dialogues with >= 2 turns, chosen by a hash of the id; split 70/10/20 by hash. */
export function loadSelfDialogue(dataDir = DEFAULT_DATA_DIR, subset = SELF_DIALOGUE_SUBSET): LabeledConversation[] {
  const text = readFileSync(join(dataDir, 'self-dialogue', 'self_dialogues.jsonl'), 'utf8');
  const all: Array<{ id: string; turns: Array<{ speaker: string; text: string }>; h: number }> = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const d = JSON.parse(line) as { id: string; turns: Array<{ speaker: string; text: string }> };
    const turns = d.turns.filter((t) => oneLine(t.text) !== '');
    if (turns.length < 2) continue;
    all.push({ id: d.id, turns, h: hash32(`self-dialogue-subset:${d.id}`) });
  }
  all.sort((a, b) => a.h - b.h || (a.id < b.id ? -1 : 1));
  return all.slice(0, subset).map((d) => {
    const first = d.turns[0]?.speaker;
    const lines = d.turns.map((t) => `${t.speaker === first ? 'user1' : 'user2'}: ${oneLine(t.text)}`);
    const id = `self-dialogue-${d.id}`;
    return realChat(id, lines, 'self-dialogue', splitByHash(id, 70, 10));
  });
}

/** A real chat's turns as register items: side 0 is user1, side 1 user2. */
function itemsOf(turns: readonly Turn[]): Item[] {
  return turns.map((t) => ({ side: t.speaker === 'user2' ? 1 : 0, text: t.text }));
}

/** Share of real chats written in chat register (the rest stay as written). */
export const REAL_REGISTER_SHARE = 0.7;

/**
 * Real chats rendered as generated ones are: most (REAL_REGISTER_SHARE) in chat register (lowercase,
 * shorthand, typos, bursts...), then excerpts, flat text and re-cuts with the generator's probabilities. Seeded by
 * each record's id, so the result does not depend on order.
 */
export function renderReal(records: readonly LabeledConversation[], sw: Pick<DataSwitches, 'register' | 'excerpts' | 'flat' | 'recut'>): LabeledConversation[] {
  return records.map((r) => {
    const rng = createRng(hash32(`render:${r.id}`));
    let turns = turnsOf(r.conversation);
    const tags: string[] = [];
    if (sw.excerpts && turns.length > 2 && rng.chance(turns.length >= LONG_TURNS ? RENDERING.excerptLong : RENDERING.excerpt)) {
      turns = excerptWindow(turns, rng);
      tags.push('excerpt');
    }
    let text: string;
    const items = itemsOf(turns);
    if (sw.register && rng.chance(REAL_REGISTER_SHARE)) {
      const r0 = drawRegister(rng, 0);
      const r1 = drawRegister(rng, 0, r0);
      text = joinLines(registerLines(items, [r0, r1], rng), ['user1', 'user2']);
      tags.push('chat-register');
    } else text = joinLines(items.map((it) => ({ ...it, prefixed: true })), ['user1', 'user2']);
    const finished = finishRendering(text, tags.includes('excerpt'), sw, rng);
    tags.push(...finished.tags);
    if (turns.length <= SHORT_TURNS) tags.push('short');
    if (turns.length >= LONG_TURNS) tags.push('long');
    const out: LabeledConversation = { ...r, conversation: finished.text };
    if (tags.length > 0) out.tags = [...(r.tags ?? []), ...tags];
    return out;
  });
}

/** Real benign test chats rendered with ONLY the register-shift transforms (tag `register-shift`). */
export function registerShiftReal(records: readonly LabeledConversation[], count: number): LabeledConversation[] {
  const pool = records.filter((r) => r.split === 'test').sort((a, b) => hash32(`shift:${a.id}`) - hash32(`shift:${b.id}`));
  return pool.slice(0, count).map((r) => {
    const rng = createRng(hash32(`shift:${r.id}`));
    const { lines, shifts } = shiftLines(itemsOf(turnsOf(r.conversation)), rng);
    return { ...r, id: `${r.id}-shift`, conversation: joinLines(lines, ['user1', 'user2']), split: 'test' as const, tags: ['register-shift', ...shifts.map((s) => `shift-${s}`)] };
  });
}
