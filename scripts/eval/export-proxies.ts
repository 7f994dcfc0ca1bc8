// Writes the contact proxies' records (contact-proxies.ts) and the excerpts written by hand
// (written-excerpts.ts) as corpus JSONL, so that the character n-gram probe (probe.py --slice NAME=PATH)
// scores the very chats `npm run eval` scores the model on.
//
//   node scripts/eval/export-proxies.ts --out .tmp/proxies
//   # contact.jsonl (and contact-stranger.jsonl, contact-courtship.jsonl by kind), short.jsonl, sms.jsonl,
//   # irc.jsonl, written-selection.jsonl, written-confirmation.jsonl, written-confirmation_2.jsonl,
//   # written-confirmation_3.jsonl, written-confirmation_4.jsonl

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { toJsonl } from '../data/record.ts';
import { contactProxyRecords } from './contact-proxies.ts';
import { WRITTEN_SETS, asRecord, loadWrittenExcerpts } from './written-excerpts.ts';

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: '.tmp/proxies' } } });
  const out = values.out;
  mkdirSync(out, { recursive: true });
  const all = contactProxyRecords();
  const byKind = (kind: string) => all.contact.filter((r) => (r.tags ?? []).includes(`contact-${kind}`));
  const written = Object.fromEntries(WRITTEN_SETS.map((set) => [`written-${set}`, loadWrittenExcerpts(set).map((e) => asRecord(e, set))]));
  const files = { ...all, 'contact-stranger': byKind('stranger'), 'contact-courtship': byKind('courtship'), ...written };
  for (const [name, records] of Object.entries(files)) {
    writeFileSync(join(out, `${name}.jsonl`), toJsonl(records));
    console.error(`${name}: ${records.length} records -> ${join(out, `${name}.jsonl`)}`);
  }
}
