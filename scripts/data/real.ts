// Loaders for the real, licensed benign chats in ../shared/data (read in place, never copied):
// Topical-Chat (CDLA-Sharing-1.0, Amazon) and Synthetic-Persona-Chat (CC BY 4.0, Google Research).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRng, hash32 } from './rng.ts';
import type { LabeledConversation, Split } from './record.ts';

export const DEFAULT_DATA_DIR = new URL('../../../shared/data/', import.meta.url).pathname;

interface TopicalTurn {
  message: string;
  agent: string;
}

function splitByHash(id: string, trainPct: number, valPct: number): Split {
  const h = hash32(id) % 100;
  return h < trainPct ? 'train' : h < trainPct + valPct ? 'val' : 'test';
}

/** A benign real chat; it carries ages sometimes, so that the presence of ages is no cue for synthetic text. */
function realChat(id: string, lines: string[], source: string, split: Split): LabeledConversation {
  const record: LabeledConversation = { id, conversation: lines.join('\n'), label: 0, predator: 'neither', family: source, split, source };
  const rng = createRng(hash32(record.id));
  if (rng.chance(0.3)) {
    const age = (): string => (rng.chance(0.5) ? String(rng.int(18, 70)) : rng.pick(['adult', '25-34', '18-24', '35-50']));
    record.age_a = age();
    if (rng.chance(0.7)) record.age_b = age();
  }
  return record;
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

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
