// Wording or talk: the same relationship chats rendered in each split's phrasings and scored by a
// model. A model that learned the talk scores them alike in all three; one that learned the lines
// finds the harmful ones in training wording and misses them in the test quarter's ("Wording, not
// talk" in docs/training.md).
//
//   node scripts/eval/wording.ts --model DIR [--n 300] [--seed 7]
//
// Every split draws its chats from one seeded stream, so the three renderings hold the same moves,
// ages and cuts wherever a draw does not depend on the bank's size.

import { parseArgs } from 'node:util';
import { COURTSHIP_FAMILIES } from '../data/contact.ts';
import { toRequest } from '../data/export.ts';
import { allSwitches, renderRecord } from '../data/generate.ts';
import type { Split } from '../data/record.ts';
import { createRng } from '../data/rng.ts';
import { createScorer } from '../../src/scoring/scorer.ts';
import { scoreInBatches } from './harness.ts';

const SPLITS: readonly Split[] = ['train', 'val', 'test'];

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

const { values } = parseArgs({ options: { model: { type: 'string' }, n: { type: 'string', default: '300' }, seed: { type: 'string', default: '7' } } });
if (!values.model) throw new Error('wording.ts: --model DIR');
const n = Number(values.n);
const seed = Number(values.seed);
const scorer = await createScorer({ modelDir: values.model, workers: 2, intraOpThreads: 1, maxQueue: 10_000, timeoutMs: 600_000 });
if (!scorer.ready) throw new Error(`model did not load: ${scorer.loadError}`);
try {
  const rows: Record<string, Record<string, { flagged: number; median: number; chats: number }>> = {};
  for (const family of COURTSHIP_FAMILIES) {
    rows[family.name] = {};
    for (const split of SPLITS) {
      const rng = createRng((seed ^ 0x3070d) >>> 0);
      const records = Array.from({ length: n }, (_, i) => renderRecord(family, `wording-${family.name}-${i}`, split, rng, allSwitches(true)))
        // A harmful family's windows before the courtship began are benign: only its harmful ones count.
        .filter((r) => !family.harmful || r.label === 1);
      const scores = (await scoreInBatches(scorer, records.map(toRequest))).map((p) => p.harmful_score);
      rows[family.name]![split] = { flagged: scores.filter((s) => s >= 0.5).length / scores.length, median: median(scores), chats: scores.length };
    }
  }
  console.log(JSON.stringify({ model: values.model, n, seed, families: rows }, null, 2));
  for (const [family, bySplit] of Object.entries(rows)) {
    console.log(`${family.padEnd(16)} ${SPLITS.map((s) => `${s} ${(100 * bySplit[s]!.flagged).toFixed(0)} % (median ${bySplit[s]!.median.toFixed(3)}, ${bySplit[s]!.chats})`).join(' | ')}`);
  }
} finally {
  await scorer.close();
}
