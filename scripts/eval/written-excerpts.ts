// Chat excerpts written by hand for this project, blind to the generator, and never trained on: the one
// proxy for the real-chat evaluation (issue 32) whose text did not come from the project's own phrase
// banks. Every other issue-32 proxy (contact-proxies.ts) draws from the families the corpus is built
// from, so a release can learn them, held-out phrasings included, and still fail real chats.
//
// Five sets, each written on December 6 2026 by three writers who saw only a description of the two
// failure kinds (the issue's words) and not the repository, and not the other sets. Each holds 90
// benign first contacts between strangers on anonymous chat sites (stated teenage peers, adults,
// adults' mild sexual talk, bots, an adult who leaves on learning the other is a child), 90 benign
// windows of close relationships (adult partners, teen couples, a parent or relative caring for a
// child, friends) on the very topics grooming uses (being unwell, missing a voice, calls later, rides,
// a motel, a parcel, a parent being home), and 90 grooming excerpts, 40 first contacts and 50 windows
// of a courtship under way, 30 to 35 of them with no named move (affection and care only). Nothing
// sexual involves a minor; the grooming is in the pattern. The `selection` set was read to choose a
// candidate; `confirmation` was scored once that candidate was fixed; `confirmation_2` was written once
// both had been read and scored once two more candidates were fixed; `confirmation_3` was written
// before run 112 (train.py --age-dropout-whole) had finished, read once it was fixed, and used again to
// judge run 113; `confirmation_4` (a third of its excerpts over 1,000 characters) was written once runs
// 112 and 113 were judged and read once 3.16.0 was fixed. A sixth, `confirmation_5` (by six writers, 45
// excerpts each, lengths spread as the fifth's), was written on December 7 while 3.16.0 was rebuilt and
// read once 3.17.0 was fixed. A seventh, `confirmation_6` (six more writers with voices of their own,
// lengths spread as the sixth's), was written once 3.17.0 was fixed and read that evening for candidate
// 3.18.0-rc1, not shipped (docs/training.md, "Measured, not yet shipped"); it joined the read sets with
// every release's figures on December 7. Most courtship windows state no age (47, 43, 45, 46, 45 and 48
// of 50, 48, 48 and 47 of 48 on the seventh to ninth). An eighth, `confirmation_7` (six more writers,
// new voices, lengths spread as the seventh's), was written on the evening of December 7 before the
// candidate it was to judge (3.18.0-rc2, not shipped) was trained, read once it was fixed, and joined
// the read sets with every release's figures that night. A ninth, `confirmation_8` (six more writers,
// new voices), written while 3.18.0-rc2 trained, was read once 3.18.0-rc3 (not shipped) was fixed and
// joined the read sets the same night. None is untouched by choosing any more, so a tenth,
// `confirmation_9` (HELD_BACK_SETS; six more writers, new voices), written while 3.18.0-rc3 trained,
// waits for the next choice.
//
// Scored as moderators export excerpts, flat text with no speakers and no ages (the real evaluation's
// form), and with speaker prefixes. Targets: the real evaluation's (CONTACT_TARGETS). 3.5.0, whose real
// figures the issue gives, fails here on strangers as it failed on the real excerpts (benign ones with
// no sexual word flagged 26, 20, 21 and 26 % here on the first four, 11, 18, 26, 32 and 22 % on the
// fifth to ninth, 23.5 % there; recall 0.60, 0.59, 0.61, 0.49, 0.53, 0.58, 0.43, 0.42 and 0.44 here,
// 0.61 there), but ranks most of these sets better than the real excerpts (ROC-AUC 0.81 to 0.84 on the
// first three, 0.76, 0.81 and 0.77 on the fourth to sixth, 0.67, 0.70 and 0.68 on the seventh to ninth,
// 0.71 there; under 1,000 characters 0.65 to 0.84, 0.40 there): real excerpts are harder than most, and
// the seventh to ninth as hard flat (0.67, 0.70 and 0.68 against 0.71), not under 1,000 characters. 270
// excerpts a set, by three writers each (six from the sixth on): a style of their own, and intervals
// the report shows.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScoreRequest } from '../../src/scoring/types.ts';
import { sideAsPredator, sidesAsConversation, type LabeledConversation } from '../data/record.ts';
import { flatten } from '../data/recut.ts';
import { CONTACT_TARGETS, proxyMetrics, proxyRow, proxyTable, type ProxyRow } from './proxy-rows.ts';
import { scoreInBatches, type BatchScorer } from './harness.ts';

export const WRITTEN_DIR = join(import.meta.dirname, 'written-excerpts');
/** The sets, each a folder of WRITTEN_DIR: the one models were chosen on, then eight held back in turn. */
export const WRITTEN_SETS = ['selection', 'confirmation', 'confirmation_2', 'confirmation_3', 'confirmation_4', 'confirmation_5', 'confirmation_6', 'confirmation_7', 'confirmation_8'] as const;
export type WrittenSet = (typeof WRITTEN_SETS)[number];
/**
 * Sets written and committed before any candidate they are to judge existed, and scored by nothing yet,
 * the shipped model included: `npm run eval` and `npm test` leave them out (only their shape is tested)
 * until a candidate is fixed, and then the set joins WRITTEN_SETS. So the next choice between models has
 * a set no earlier choice has read.
 */
export const HELD_BACK_SETS = ['confirmation_9'] as const;
export type HeldBackSet = (typeof HELD_BACK_SETS)[number];
/** The real evaluation's short excerpts: those under this many characters ranked backwards in 3.5.0. */
export const WRITTEN_SHORT_CHARS = 1000;

export interface WrittenExcerpt {
  id: string;
  family: 'stranger_contact' | 'relationship';
  label: 0 | 1;
  /** The groomer's speaker, or neither. */
  predator: 'A' | 'B' | 'neither';
  /** Who the two are, in the writer's words (not scored). */
  pair: string;
  ages: [number | null, number | null];
  teen_age_stated: boolean;
  /** Benign excerpts: whether a line holds a sexual word (the writer's reading). */
  sexual_word?: boolean;
  /** Grooming excerpts: whether the window holds a named move (a picture, a camera, another app, secrecy, a gift, a meeting). */
  named_move?: boolean;
  turns: Array<['A' | 'B', string]>;
}

/**
 * What `test/model/model-guards.test.ts` holds the shipped model to, on each set: past 3.5.0's figures
 * (before the two failure kinds were in training) where later releases moved past them, with room for a
 * retrained seed; near or below both where they did not (relationship windows, the groomer named: on
 * the fourth set 3.8.0 and 3.12.0 name 49 of 90, under the floor, 3.15.0 57 and 3.16.0 62; on the fifth
 * 3.10.0 names 48, 3.16.0 66). In brackets, per set (selection; confirmation; confirmation_2;
 * confirmation_3; confirmation_4; confirmation_5; confirmation_6; confirmation_7; confirmation_8):
 * 3.5.0, then the range of 3.6.0 to 3.17.0. 3.15.0 read relationship windows flat little better than
 * 3.5.0 did (0.805, 0.912, 0.830, 0.866 and 0.836 against 0.805, 0.900, 0.873, 0.819 and 0.785);
 * 3.16.0, trained on windows written blind, reads them at 0.858, 0.929, 0.876, 0.895 and 0.880. The
 * floor only keeps them from falling back. The sixth set is the hardest on strangers: 3.6.0 to 3.11.0
 * read it flat under the floor (0.800 to 0.835), seven releases flag more of its benign strangers than
 * the floor allows (15 to 19 of 90), and 3.17.0 flags 13 (0.144): one excerpt inside the floor, so a
 * candidate that flags one more there fails `npm test`. The seventh is the hardest of all: 3.6.0 to
 * 3.15.0 read it flat under the floor (0.758 to 0.813) and its relationship windows under theirs (0.698
 * to 0.751), 3.16.0 reads it at 0.840, and every release before 3.17.0 names fewer of its groomers than
 * the floor (39 to 46 of 90); 3.17.0 names 50, half an excerpt above it. The eighth is as hard: 3.6.0
 * to 3.15.0 read it flat under the floor (0.770 to 0.833) and 3.16.0 at 0.839, nine releases read its
 * relationship windows under theirs (0.708 to 0.766: 3.5.0 to 3.10.0 and 3.13.0 to 3.15.0), 3.7.0 flags
 * 16 of its benign strangers, every release before 3.16.0 names fewer of its groomers than the floor
 * (38 to 48 of 90), and 3.17.0 reads it at 0.855 and names 53. On the ninth every release from 3.6.0 to
 * 3.16.0 reads it flat under the floor (0.764 to 0.839), eleven read its relationship windows under
 * theirs (0.661 to 0.766: 3.5.0 to 3.11.0 and 3.13.0 to 3.16.0), 3.7.0 flags 15 of its benign
 * strangers, every release before 3.16.0 names fewer of its groomers than the floor (40 to 48 of 90),
 * and 3.17.0 reads it at 0.863, flags 9 and names 52. Floors, not the targets.
 */
export const WRITTEN_FLOORS = {
  /** every excerpt flat (0.808, 0.872 to 0.913; 0.831, 0.895 to 0.953; 0.840, 0.861 to 0.909; 0.761, 0.842 to 0.943; 0.809, 0.875 to 0.935; 0.768, 0.800 to 0.910; 0.670, 0.758 to 0.867; 0.698, 0.770 to 0.855; 0.680, 0.764 to 0.863) */
  flat_roc_auc_min: 0.84,
  /** strangers' benign first contacts flat, flagged at 0.5 (0.278, 0.044 to 0.144; 0.200, 0 to 0.122; 0.233, 0.056 to 0.100; 0.278, 0.056 to 0.122; 0.100, 0.033 to 0.111; 0.233, 0.122 to 0.211; 0.267, 0.089 to 0.178; 0.322, 0.067 to 0.178; 0.222, 0.078 to 0.167) */
  strangers_benign_flagged_max: 0.15,
  /** relationship windows flat (0.805, 0.805 to 0.900; 0.900, 0.911 to 0.937; 0.873, 0.818 to 0.889; 0.819, 0.838 to 0.927; 0.785, 0.800 to 0.880; 0.767, 0.800 to 0.893; 0.645, 0.698 to 0.818; 0.713, 0.708 to 0.809; 0.661, 0.686 to 0.803) */
  relationships_roc_auc_min: 0.77,
  /** grooming excerpts with speakers whose groomer is named (0.756, 0.656 to 0.778; 0.767, 0.667 to 0.844; 0.778, 0.589 to 0.767; 0.611, 0.544 to 0.767; 0.744, 0.533 to 0.811; 0.689, 0.600 to 0.778; 0.478, 0.433 to 0.556; 0.456, 0.422 to 0.589; 0.478, 0.444 to 0.578) */
  predator_named_min: 0.55,
} as const;

/** Every excerpt of a set, in file order (files by name). Throws on a malformed line: the sets are hand-edited. */
export function loadWrittenExcerpts(set: WrittenSet | HeldBackSet, root = WRITTEN_DIR): WrittenExcerpt[] {
  const dir = join(root, set);
  const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort();
  return files.flatMap((f) =>
    readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line, i) => checked(JSON.parse(line) as WrittenExcerpt, `${f}:${i + 1}`)),
  );
}

function checked(e: WrittenExcerpt, where: string): WrittenExcerpt {
  const bad = (why: string): never => {
    throw new Error(`${where}: ${why}`);
  };
  if (e.family !== 'stranger_contact' && e.family !== 'relationship') bad(`family ${JSON.stringify(e.family)}`);
  if (e.label !== 0 && e.label !== 1) bad(`label ${JSON.stringify(e.label)}`);
  if ((e.label === 1) !== (e.predator === 'A' || e.predator === 'B')) bad(`label ${e.label} with predator ${JSON.stringify(e.predator)}`);
  if (!Array.isArray(e.turns) || e.turns.length < 2) bad('fewer than two turns');
  for (const t of e.turns) if ((t[0] !== 'A' && t[0] !== 'B') || typeof t[1] !== 'string' || t[1].trim() === '') bad(`turn ${JSON.stringify(t)}`);
  // The rows count by these marks: a line without its mark would land in "no sexual word" or "no named move" unseen.
  if (typeof e.teen_age_stated !== 'boolean') bad('teen_age_stated is not true or false');
  if (e.label === 0 && typeof e.sexual_word !== 'boolean') bad('a benign excerpt without sexual_word');
  if (e.label === 1 && typeof e.named_move !== 'boolean') bad('a grooming excerpt without named_move');
  return e;
}

/** The excerpt with speaker prefixes, A as user1 and B as user2. */
export function withSpeakers(e: WrittenExcerpt): string {
  return sidesAsConversation(e.turns);
}

/** The excerpt as moderators export it: every line's text on one line, no speakers. */
export function flatExport(e: WrittenExcerpt): string {
  return flatten(withSpeakers(e));
}

/** The excerpt as a test record (with speakers), for the character n-gram probe (export-proxies.ts). */
export function asRecord(e: WrittenExcerpt, set: WrittenSet): LabeledConversation {
  return {
    id: `written-${set}-${e.id}`,
    conversation: withSpeakers(e),
    label: e.label,
    predator: sideAsPredator(e.predator),
    family: `written_${e.family}`,
    split: 'test',
    source: 'written',
    tags: [`written-${set}`],
  };
}

export interface WrittenReport {
  set: WrittenSet;
  rows: ProxyRow[];
  /** Share of the grooming excerpts, with speakers, whose groomer the service names. */
  predator_named: number;
  /** How many that is, of how many grooming excerpts. */
  named: number;
  grooming: number;
}

const request = (conversation: string): ScoreRequest => ({ conversation });

export async function evaluateWrittenExcerpts(scorer: BatchScorer, set: WrittenSet, excerpts: readonly WrittenExcerpt[] = loadWrittenExcerpts(set)): Promise<WrittenReport> {
  const flat = (await scoreInBatches(scorer, excerpts.map((e) => request(flatExport(e))))).map((p) => p.harmful_score);
  const spoken = await scoreInBatches(scorer, excerpts.map((e) => request(withSpeakers(e))));
  const t = CONTACT_TARGETS;
  const rows: ProxyRow[] = [];
  const add = (slice: string, keep: (e: WrittenExcerpt) => boolean, scores: readonly number[], target: string): void => {
    const idx = excerpts.flatMap((e, i) => (keep(e) ? [i] : []));
    rows.push(proxyRow(slice, idx.map((i) => excerpts[i] as WrittenExcerpt), idx.map((i) => scores[i] as number), target));
  };
  const benignStranger = (e: WrittenExcerpt): boolean => e.label === 0 && e.family === 'stranger_contact';
  const all = `ROC-AUC >= ${t.roc_auc_min}, recall >= ${t.recall_min}, benign flagged <= ${t.fpr_max}`;
  add('flat: every excerpt', () => true, flat, all);
  add(`flat: excerpts under ${WRITTEN_SHORT_CHARS.toLocaleString('en')} characters`, (e) => flatExport(e).length < WRITTEN_SHORT_CHARS, flat, `ROC-AUC >= ${t.short_excerpt_roc_auc_min}`);
  add('flat: first contact between strangers', (e) => e.family === 'stranger_contact', flat, all);
  add('flat: strangers, benign, a teenage age stated', (e) => benignStranger(e) && e.teen_age_stated, flat, `flagged <= ${t.fpr_max}`);
  add('flat: strangers, benign, no sexual word', (e) => benignStranger(e) && e.sexual_word !== true, flat, `flagged <= ${t.no_sexual_word_flagged_max}`);
  add('flat: a relationship under way', (e) => e.family === 'relationship', flat, all);
  add('flat: courtship with no named move, beside benign relationships', (e) => e.family === 'relationship' && e.named_move !== true, flat, all);
  // The miss the sets found: a child's age shown only by school, a parent or a bedtime (the writer's `ages`).
  add('flat: grooming that states no age, beside benign relationships', (e) => (e.label === 1 && e.ages.every((a) => a === null)) || (e.label === 0 && e.family === 'relationship'), flat, all);
  add('with speakers: every excerpt', () => true, spoken.map((p) => p.harmful_score), all);
  const grooming = excerpts.flatMap((e, i) => (e.label === 1 ? [[e, spoken[i]] as const] : []));
  const named = grooming.filter(([e, p]) => p?.predatory_user === (e.predator === 'A' ? 'user1' : 'user2')).length;
  return { set, rows, predator_named: named / Math.max(1, grooming.length), named, grooming: grooming.length };
}

const SET_NOTE: Record<WrittenSet, string> = {
  selection: 'read to choose between candidate models, so a release may be fitted to it',
  confirmation: 'held back until a candidate chosen on the selection set was fixed, then read',
  confirmation_2: 'written after both were read, held back until two more candidates were fixed, then read',
  confirmation_3: 'written after the first three had judged candidates, held back until run 112 was fixed, then read; it judged run 113 too',
  confirmation_4: 'written after the fourth had judged two candidates, a third of it over 1,000 characters, held back until 3.16.0 was fixed, then read',
  confirmation_5: 'written by six writers while 3.16.0 was rebuilt, lengths spread as the fifth\'s, held back until 3.17.0 was fixed, then read',
  confirmation_6: 'written by six more writers with voices of their own once 3.17.0 was fixed, held back until candidate 3.18.0-rc1 (not shipped) was fixed, then read',
  confirmation_7: 'written by six more writers with new voices before candidate 3.18.0-rc2 was trained, held back until it (not shipped) was fixed, then read',
  confirmation_8: 'written by six more writers with new voices while candidate 3.18.0-rc2 trained, held back until candidate 3.18.0-rc3 (not shipped) was fixed, then read',
};

export function writtenMarkdown(reports: readonly WrittenReport[]): string {
  return `## Excerpts written by hand, blind to the generator (issue 32; npm test holds the shipped model to floors)
Excerpts written for this project by writers who saw the issue's description of the two failure kinds and
not the repository (\`scripts/eval/written-excerpts/\`), never trained on: benign first contacts between
strangers, benign close relationships on the topics grooming uses, and grooming first contacts and
courtships under way. Flat rows are scored as moderators export excerpts (one line, no speakers, no
ages). Targets are the real-chat evaluation's; in brackets, 95 % intervals over the slice.
${reports
  .map(
    (r) => `
**The ${r.set} set** (${r.rows[0]?.chats ?? 0} excerpts; ${SET_NOTE[r.set]}):

${proxyTable(r.rows)}

Grooming excerpts with speakers whose groomer is named: ${r.named} of ${r.grooming}.
`,
  )
  .join('')}`;
}

/** Metric names for the manifest: `written_<set>_<slice>_<figure>` and `written_<set>_predator_named`. */
export function writtenMetrics(reports: readonly WrittenReport[]): Record<string, number> {
  return Object.assign(
    {},
    ...reports.map((r) => ({ ...proxyMetrics(`written_${r.set}`, r.rows), [`written_${r.set}_predator_named`]: Math.round(r.predator_named * 10_000) / 10_000 })),
  ) as Record<string, number>;
}
