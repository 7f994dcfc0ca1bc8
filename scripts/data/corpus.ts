// Assembles the training corpus: generated conversations, the real benign chats in ../shared/data
// and any operator data (JSONL or PAN12), into one JSONL of LabeledConversation records.
//
//   node scripts/data/corpus.ts --out .tmp/data/corpus.jsonl [--seed 7] [--n 16000]
//        [--data my.jsonl ...] [--pan12 convs.xml --pan12-predators ids.txt] [--no-real] [--no-synthetic]

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { generate } from './generate.ts';
import { importJsonl, importPan12 } from './importers.ts';
import { loadPersonaChat, loadTopicalChat, DEFAULT_DATA_DIR } from './real.ts';
import { toJsonl, type LabeledConversation } from './record.ts';

export interface CorpusOptions {
  seed: number;
  n: number;
  real: boolean;
  synthetic: boolean;
  dataDir: string;
  jsonl: string[];
  pan12?: { xml: string; predators: string } | undefined;
  /** Keep at most this many real chats (smoke runs). */
  realLimit?: number | undefined;
}

export function buildCorpus(o: CorpusOptions): LabeledConversation[] {
  const out: LabeledConversation[] = [];
  if (o.synthetic) out.push(...generate({ seed: o.seed, n: o.n }));
  if (o.real) {
    const real = [...loadTopicalChat(o.dataDir), ...loadPersonaChat(o.dataDir)];
    out.push(...(o.realLimit === undefined ? real : real.filter((_, i) => i % Math.ceil(real.length / o.realLimit!) === 0)));
  }
  o.jsonl.forEach((path, i) => out.push(...importJsonl(readFileSync(path, 'utf8'), `jsonl${i}`)));
  if (o.pan12) out.push(...importPan12(readFileSync(o.pan12.xml, 'utf8'), readFileSync(o.pan12.predators, 'utf8')).records);
  return out;
}

export function summarize(records: LabeledConversation[]): Record<string, Record<string, number>> {
  const summary: Record<string, Record<string, number>> = {};
  for (const r of records) {
    const s = (summary[r.source] ??= { conversations: 0, harmful: 0, train: 0, val: 0, test: 0 });
    s.conversations = (s.conversations ?? 0) + 1;
    s.harmful = (s.harmful ?? 0) + r.label;
    s[r.split] = (s[r.split] ?? 0) + 1;
  }
  return summary;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      seed: { type: 'string', default: '7' },
      n: { type: 'string', default: '16000' },
      data: { type: 'string', multiple: true, default: [] },
      pan12: { type: 'string' },
      'pan12-predators': { type: 'string' },
      'no-real': { type: 'boolean', default: false },
      'no-synthetic': { type: 'boolean', default: false },
      'data-dir': { type: 'string', default: DEFAULT_DATA_DIR },
      'real-limit': { type: 'string' },
    },
  });
  if (!values.out) throw new Error('--out is required');
  if (values.pan12 && !values['pan12-predators']) throw new Error('--pan12 needs --pan12-predators');
  const records = buildCorpus({
    seed: Number(values.seed),
    n: Number(values.n),
    real: !values['no-real'],
    synthetic: !values['no-synthetic'],
    dataDir: values['data-dir'],
    jsonl: values.data,
    pan12: values.pan12 ? { xml: values.pan12, predators: values['pan12-predators'] as string } : undefined,
    realLimit: values['real-limit'] ? Number(values['real-limit']) : undefined,
  });
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, toJsonl(records));
  writeFileSync(values.out.replace(/\.jsonl$/, '') + '.summary.json', JSON.stringify(summarize(records), null, 2));
  console.error(`corpus: ${records.length} conversations -> ${values.out}`);
}
