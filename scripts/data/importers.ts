// Importers for labeled chats an operator owns: a documented JSONL format and the PAN12 XML format
// (conversations file plus a list of predator author ids). Both yield LabeledConversation records
// in the API's `user1:` / `user2:` text form, so retraining sees them exactly as the service would.

import { hash32 } from './rng.ts';
import type { LabeledConversation, PredatorLabel, Split } from './record.ts';

export class ImportError extends Error {
  override name = 'ImportError';
}

function splitFor(id: string): Split {
  const h = hash32(id) % 100;
  return h < 80 ? 'train' : h < 90 ? 'val' : 'test';
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/**
 * JSONL, one object per line:
 *   {"conversation": "user1: ...\nuser2: ...", "label": 0|1, "predator": "user1"|"user2"|"neither",
 *    "age_a"?: "14"|"12-15"|"minor"|"adult", "age_b"?: ..., "split"?: "train"|"val"|"test", "id"?: "..."}
 * `predator` may be left out for label 0 (it is then "neither"); label 1 needs user1 or user2.
 */
export function importJsonl(text: string, source = 'jsonl'): LabeledConversation[] {
  const out: LabeledConversation[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    const where = `line ${index + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new ImportError(`${where}: not valid JSON`);
    }
    if (typeof value !== 'object' || value === null) throw new ImportError(`${where}: expected an object`);
    const v = value as Record<string, unknown>;
    if (typeof v.conversation !== 'string' || v.conversation.trim() === '') throw new ImportError(`${where}: "conversation" must be a non-empty string`);
    if (v.label !== 0 && v.label !== 1) throw new ImportError(`${where}: "label" must be 0 or 1`);
    const predator = (v.predator ?? (v.label === 0 ? 'neither' : undefined)) as unknown;
    if (predator !== 'user1' && predator !== 'user2' && predator !== 'neither') {
      throw new ImportError(`${where}: "predator" must be "user1", "user2" or "neither"`);
    }
    if (v.label === 1 && predator === 'neither') throw new ImportError(`${where}: a harmful conversation (label 1) needs predator user1 or user2`);
    if (v.label === 0 && predator !== 'neither') throw new ImportError(`${where}: a benign conversation (label 0) has predator "neither"`);
    for (const key of ['age_a', 'age_b'] as const) {
      if (v[key] !== undefined && typeof v[key] !== 'string') throw new ImportError(`${where}: "${key}" must be a string`);
    }
    if (v.split !== undefined && v.split !== 'train' && v.split !== 'val' && v.split !== 'test') {
      throw new ImportError(`${where}: "split" must be train, val or test`);
    }
    const id = typeof v.id === 'string' ? `${source}-${v.id}` : `${source}-${index + 1}`;
    const record: LabeledConversation = {
      id,
      conversation: v.conversation,
      label: v.label,
      predator: predator as PredatorLabel,
      family: source,
      split: (v.split as Split | undefined) ?? splitFor(id),
      source,
    };
    if (typeof v.age_a === 'string') record.age_a = v.age_a;
    if (typeof v.age_b === 'string') record.age_b = v.age_b;
    out.push(record);
  });
  return out;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function decodeXml(text: string): string {
  return text
    .replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1')
    .replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (m, e: string) => {
      if (e[0] === '#') {
        const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return Number.isFinite(code) ? String.fromCodePoint(code) : m;
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    });
}

export interface Pan12Stats {
  conversations: number;
  harmful: number;
  /** Conversations dropped: no text, a single author, or the predator is not one of the first two authors. */
  skipped: number;
}

/**
 * PAN12 sexual-predator-identification format: `<conversations><conversation id><message line>
 * <author/><time/><text/></message>...` plus a text file of predator author ids, one per line.
 * A conversation is harmful when one of its first two authors is a listed predator.
 */
export function importPan12(xml: string, predatorIds: string, source = 'pan12'): { records: LabeledConversation[]; stats: Pan12Stats } {
  const predators = new Set(predatorIds.split(/\r?\n/).map((s) => s.trim()).filter((s) => s !== ''));
  const records: LabeledConversation[] = [];
  const stats: Pan12Stats = { conversations: 0, harmful: 0, skipped: 0 };
  const convRe = /<conversation\s+id="([^"]*)"\s*>([\s\S]*?)<\/conversation>/g;
  const msgRe = /<message\b[^>]*>([\s\S]*?)<\/message>/g;
  for (const conv of xml.matchAll(convRe)) {
    const convId = conv[1] ?? '';
    const authors: string[] = [];
    const lines: string[] = [];
    for (const msg of (conv[2] ?? '').matchAll(msgRe)) {
      const body = msg[1] ?? '';
      const author = decodeXml(/<author>([\s\S]*?)<\/author>/.exec(body)?.[1] ?? '').trim();
      const text = oneLine(decodeXml(/<text>([\s\S]*?)<\/text>/.exec(body)?.[1] ?? ''));
      if (author === '' || text === '') continue;
      if (!authors.includes(author)) authors.push(author);
      const slot = authors.indexOf(author);
      // A third author cannot be represented as user1/user2: its lines are left out.
      if (slot > 1) continue;
      lines.push(`user${slot + 1}: ${text}`);
    }
    const predatorSlot = authors.findIndex((a) => predators.has(a));
    if (lines.length === 0 || authors.length < 2 || predatorSlot > 1) {
      stats.skipped++;
      continue;
    }
    const harmful = predatorSlot >= 0;
    const id = `${source}-${convId}`;
    records.push({
      id,
      conversation: lines.join('\n'),
      label: harmful ? 1 : 0,
      predator: harmful ? (predatorSlot === 0 ? 'user1' : 'user2') : 'neither',
      family: source,
      split: splitFor(id),
      source,
    });
    stats.conversations++;
    if (harmful) stats.harmful++;
  }
  return { records, stats };
}
