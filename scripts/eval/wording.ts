// Wording or talk: the same relationship chats rendered in each split's phrasings and scored by a
// model. A model that learned the talk scores them alike in all three; one that learned the lines
// finds the harmful ones in training wording and misses them in the test quarter's ("Wording, not
// talk" in docs/training.md).
//
//   node scripts/eval/wording.ts --model DIR [--n 300] [--seed 7]
//   node scripts/eval/wording.ts --model DIR --banks      # training wording but for one group of banks at a time
//
// Every split draws its chats from one seeded stream, so the three renderings hold the same moves,
// ages and cuts wherever a draw does not depend on the bank's size. With --banks each row renders
// the chats in training wording except one group of banks (BANK_GROUPS), which takes the test
// quarter's: which banks' unseen wording loses the harmful windows.

import { parseArgs } from 'node:util';
import { COURTSHIP_FAMILIES } from '../data/contact.ts';
import { toRequest } from '../data/export.ts';
import { allSwitches, renderRecord, type DataSwitches } from '../data/generate.ts';
import * as C from '../data/phrases-contact.ts';
import * as P from '../data/phrases.ts';
import type { Split } from '../data/record.ts';
import { createRng } from '../data/rng.ts';
import { createScorer, type EngineScorer } from '../../src/scoring/scorer.ts';
import { scoreInBatches } from './harness.ts';

const SPLITS: readonly Split[] = ['train', 'val', 'test'];

/** Every phrase bank by its exported name. */
const BANKS = new Map<string, readonly string[]>(
  [...Object.entries(C), ...Object.entries(P)].flatMap(([name, value]): Array<[string, readonly string[]]> =>
    Array.isArray(value) && typeof value[0] === 'string' ? [[name, value as readonly string[]]] : [],
  ),
);
const named = (test: (name: string) => boolean): string[] => [...BANKS.keys()].filter(test);
const courtshipBank = (name: string): boolean => name.startsWith('RL_');

/** The groups --banks renders in the test quarter's wording, one row each. */
export const BANK_GROUPS: Readonly<Record<string, readonly string[]>> = {
  none: [],
  lives: ['CHILD_LIFE', 'ADULT_LIFE'],
  child_life: ['CHILD_LIFE'],
  adult_life: ['ADULT_LIFE'],
  courtship: named(courtshipBank),
  courtship_lines: named((n) => courtshipBank(n) && !n.endsWith('_REPLY')),
  courtship_replies: named((n) => courtshipBank(n) && n.endsWith('_REPLY')),
  ...Object.fromEntries(['AFFECTION', 'CARE', 'CALL', 'PLANS', 'GIFT', 'JEALOUS'].map((t) => [t.toLowerCase(), [`RL_${t}`, `RL_${t}_REPLY`]])),
  everyday: named((n) => !courtshipBank(n) && !n.endsWith('_LIFE') && !n.startsWith('ST_')),
  all: [...BANKS.keys()],
};

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

interface Cell {
  flagged: number;
  median: number;
  chats: number;
}

/** Each relationship family's chats (only the harmful windows of a harmful family) rendered in `split` with `sw`, scored. */
async function scoreFamilies(scorer: EngineScorer, n: number, seed: number, split: Split, sw: DataSwitches): Promise<Record<string, Cell>> {
  const out: Record<string, Cell> = {};
  for (const family of COURTSHIP_FAMILIES) {
    const rng = createRng((seed ^ 0x3070d) >>> 0);
    const records = Array.from({ length: n }, (_, i) => renderRecord(family, `wording-${family.name}-${i}`, split, rng, sw))
      // A harmful family's windows before the courtship began are benign: only its harmful ones count.
      .filter((r) => !family.harmful || r.label === 1);
    const scores = (await scoreInBatches(scorer, records.map(toRequest))).map((p) => p.harmful_score);
    out[family.name] = { flagged: scores.filter((s) => s >= 0.5).length / scores.length, median: median(scores), chats: scores.length };
  }
  return out;
}

const cell = (c: Cell): string => `${(100 * c.flagged).toFixed(0)} % (median ${c.median.toFixed(3)}, ${c.chats})`;

if (import.meta.main) {
  const { values } = parseArgs({
    options: { model: { type: 'string' }, n: { type: 'string', default: '300' }, seed: { type: 'string', default: '7' }, banks: { type: 'boolean', default: false } },
  });
  if (!values.model) throw new Error('wording.ts: --model DIR');
  const n = Number(values.n);
  const seed = Number(values.seed);
  const scorer = await createScorer({ modelDir: values.model, workers: 2, intraOpThreads: 1, maxQueue: 10_000, timeoutMs: 600_000 });
  if (!scorer.ready) throw new Error(`model did not load: ${scorer.loadError}`);
  try {
    if (values.banks) {
      const rows: Record<string, Record<string, Cell>> = {};
      for (const [group, names] of Object.entries(BANK_GROUPS)) {
        const wording = new Map(names.map((name) => [BANKS.get(name) as readonly string[], 'test' as Split]));
        rows[group] = await scoreFamilies(scorer, n, seed, 'train', { ...allSwitches(true), wording });
      }
      console.log(JSON.stringify({ model: values.model, n, seed, test_wording_for: rows }, null, 2));
      for (const [group, byFamily] of Object.entries(rows)) {
        console.log(`${group.padEnd(18)} ${Object.entries(byFamily).map(([f, c]) => `${f} ${cell(c)}`).join(' | ')}`);
      }
    } else {
      const rows: Record<string, Record<string, Cell>> = {};
      for (const split of SPLITS) {
        for (const [family, c] of Object.entries(await scoreFamilies(scorer, n, seed, split, allSwitches(true)))) (rows[family] ??= {})[split] = c;
      }
      console.log(JSON.stringify({ model: values.model, n, seed, families: rows }, null, 2));
      for (const [family, bySplit] of Object.entries(rows)) {
        console.log(`${family.padEnd(16)} ${SPLITS.map((s) => `${s} ${cell(bySplit[s]!)}`).join(' | ')}`);
      }
    }
  } finally {
    await scorer.close();
  }
}
