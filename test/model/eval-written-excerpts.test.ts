// The excerpts written by hand (scripts/eval/written-excerpts.ts): what the sets hold, that training never
// reads them, how they are rendered, and which excerpts each row counts, checked with stand-in scorers
// whose answers are known.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Prediction, ScoreRequest } from '../../src/scoring/types.ts';
import {
  HELD_BACK_SETS,
  WRITTEN_SETS,
  WRITTEN_SHORT_CHARS,
  asRecord,
  evaluateWrittenExcerpts,
  flatExport,
  loadWrittenExcerpts,
  withSpeakers,
  writtenMarkdown,
  writtenMetrics,
  type WrittenExcerpt,
} from '../../scripts/eval/written-excerpts.ts';

const ROOT = join(import.meta.dirname, '../..');
const sets = Object.fromEntries(WRITTEN_SETS.map((s) => [s, loadWrittenExcerpts(s)])) as Record<(typeof WRITTEN_SETS)[number], WrittenExcerpt[]>;
// Loaded for their shape and their overlap with the others only: nothing scores a held-back set.
const heldBack = Object.fromEntries(HELD_BACK_SETS.map((s) => [s, loadWrittenExcerpts(s)])) as Record<(typeof HELD_BACK_SETS)[number], WrittenExcerpt[]>;
const everySet = { ...sets, ...heldBack } as Record<string, WrittenExcerpt[]>;

/** A stand-in that scores by a rule on the request's text, naming user1 as the predator. */
const scoringBy = (harmful: (conversation: string) => boolean) => ({
  score: async (requests: ScoreRequest[]): Promise<Prediction[]> =>
    requests.map((r) => ({ harmful_score: harmful(r.conversation) ? 0.9 : 0.1, predatory_user: 'user1' }) as Prediction),
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && /\.(ts|py|sh|env)$/.test(d.name))
    .map((d) => join(d.parentPath, d.name));
}

describe('excerpts written by hand', () => {
  it('holds, in each set, held-back ones too, 90 benign first contacts, 90 benign relationships and 90 grooming excerpts of both kinds', () => {
    for (const [set, xs] of Object.entries(everySet)) {
      expect(xs.length, set).toBe(270);
      const count = (label: 0 | 1, family: string): number => xs.filter((e) => e.label === label && e.family === family).length;
      expect(count(0, 'stranger_contact'), set).toBe(90);
      expect(count(0, 'relationship'), set).toBe(90);
      expect(count(1, 'stranger_contact') + count(1, 'relationship'), set).toBe(90);
      expect(count(1, 'stranger_contact'), set).toBeGreaterThan(30);
      expect(count(1, 'relationship'), set).toBeGreaterThan(40);
      // The miss the issue names: courtship with nothing but affection and care in the window.
      expect(xs.filter((e) => e.label === 1 && e.family === 'relationship' && e.named_move === false).length, set).toBeGreaterThanOrEqual(25);
    }
  });

  it('shares no id and no excerpt between the sets, held-back ones included', () => {
    const all = Object.values(everySet).flat();
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    expect(new Set(all.map(flatExport)).size).toBe(all.length);
  });

  it('is read by no data or training code, so no release can be trained on it', () => {
    const readers = [...sourceFiles(join(ROOT, 'scripts/data')), ...sourceFiles(join(ROOT, 'scripts/train'))].filter((f) =>
      /written-excerpts|written_excerpts/.test(readFileSync(f, 'utf8')),
    );
    expect(readers).toEqual([]);
  });

  it('renders an excerpt flat as one line of its texts and with speakers as one user1/user2 line a turn', () => {
    const e = sets.selection[0] as WrittenExcerpt;
    expect(flatExport(e)).toBe(e.turns.map(([, t]) => t.trim()).join(' '));
    expect(flatExport(e)).not.toContain('\n');
    const lines = withSpeakers(e).split('\n');
    expect(lines).toHaveLength(e.turns.length);
    expect(lines.every((l, i) => l === `${e.turns[i]?.[0] === 'A' ? 'user1' : 'user2'}: ${e.turns[i]?.[1]}`)).toBe(true);
  });

  it('gives the n-gram probe each excerpt as a test record with speakers, its label and its groomer as a speaker', () => {
    const groomer = sets.confirmation.find((e) => e.label === 1 && e.predator === 'B') as WrittenExcerpt;
    expect(asRecord(groomer, 'confirmation')).toMatchObject({
      id: `written-confirmation-${groomer.id}`,
      conversation: withSpeakers(groomer),
      label: 1,
      predator: 'user2',
      split: 'test',
      tags: ['written-confirmation'],
    });
    expect(asRecord(sets.selection.find((e) => e.label === 0) as WrittenExcerpt, 'selection')).toMatchObject({ label: 0, predator: 'neither', split: 'test' });
  });

  it('reports a perfect reading when exactly the grooming excerpts score above 0.5, flat and with speakers', async () => {
    for (const set of WRITTEN_SETS) {
      const grooming = new Set(sets[set].filter((e) => e.label === 1).flatMap((e) => [flatExport(e), withSpeakers(e)]));
      const r = await evaluateWrittenExcerpts(scoringBy((c) => grooming.has(c)), set);
      expect(r.rows.length).toBe(9);
      for (const row of r.rows) {
        if (row.roc_auc !== null) expect(row.roc_auc, row.slice).toBe(1);
        if (row.recall_at_0_5 !== null) expect(row.recall_at_0_5, row.slice).toBe(1);
        if (row.benign_flagged !== null) expect(row.benign_flagged, row.slice).toBe(0);
      }
    }
  });

  it('scores the flat rows on the flat export and the speakers row on the excerpt with speakers', async () => {
    // A stand-in that flags grooming only when it arrives on one line.
    const grooming = new Set(sets.selection.filter((e) => e.label === 1).map(flatExport));
    const r = await evaluateWrittenExcerpts(scoringBy((c) => !c.includes('\n') && grooming.has(c)), 'selection');
    for (const row of r.rows) {
      if (row.recall_at_0_5 === null) continue;
      expect(row.recall_at_0_5, row.slice).toBe(row.slice.startsWith('flat: ') ? 1 : 0);
    }
  });

  it("counts the groomer named only when the service names the excerpt's groomer, A as user1 and B as user2", async () => {
    const groomers = sets.selection.filter((e) => e.label === 1);
    const three = [...groomers.filter((e) => e.predator === 'A').slice(0, 3), ...groomers.filter((e) => e.predator === 'B').slice(0, 1)];
    // The stand-in names user1 every time: right for the three whose groomer is A.
    const r = await evaluateWrittenExcerpts(scoringBy(() => true), 'selection', three);
    expect(r).toMatchObject({ named: 3, grooming: 4, predator_named: 0.75 });
    expect(writtenMarkdown([r])).toContain('Grooming excerpts with speakers whose groomer is named: 3 of 4.');
  });

  it("counts a benign first contact in the teenage-age and no-sexual-word rows by the writer's marks", async () => {
    const xs = sets.selection;
    const r = await evaluateWrittenExcerpts(scoringBy(() => true), 'selection');
    const row = (slice: string) => r.rows.find((x) => x.slice === slice);
    const benign = xs.filter((e) => e.label === 0 && e.family === 'stranger_contact');
    expect(row('flat: strangers, benign, a teenage age stated')).toMatchObject({ chats: benign.filter((e) => e.teen_age_stated).length, harmful: 0, benign_flagged: 1 });
    expect(row('flat: strangers, benign, no sexual word')).toMatchObject({ chats: benign.filter((e) => e.sexual_word !== true).length, harmful: 0 });
    expect(row(`flat: excerpts under ${WRITTEN_SHORT_CHARS.toLocaleString('en')} characters`)?.chats).toBe(xs.filter((e) => flatExport(e).length < WRITTEN_SHORT_CHARS).length);
    expect(row('flat: courtship with no named move, beside benign relationships')).toMatchObject({
      harmful: xs.filter((e) => e.label === 1 && e.family === 'relationship' && e.named_move === false).length,
      chats: xs.filter((e) => e.family === 'relationship' && e.named_move !== true).length,
    });
  });

  it('leaves the held-back sets out of what npm run eval and the floors score', () => {
    for (const set of HELD_BACK_SETS) expect(WRITTEN_SETS as readonly string[]).not.toContain(set);
  });

  it("counts grooming in the no-age row by the writer's ages (both null), beside every benign relationship window", async () => {
    const xs = sets.confirmation;
    const r = await evaluateWrittenExcerpts(scoringBy(() => true), 'confirmation');
    const noAge = xs.filter((e) => e.label === 1 && e.ages[0] === null && e.ages[1] === null);
    // Here a first contact states no age and a courtship window states one: the row is not the courtship row under another name.
    expect(noAge.some((e) => e.family === 'stranger_contact')).toBe(true);
    expect(xs.some((e) => e.label === 1 && e.family === 'relationship' && e.ages.some((a) => a !== null))).toBe(true);
    expect(r.rows.find((x) => x.slice === 'flat: grooming that states no age, beside benign relationships')).toMatchObject({
      harmful: noAge.length,
      chats: noAge.length + xs.filter((e) => e.label === 0 && e.family === 'relationship').length,
      recall_at_0_5: 1,
      benign_flagged: 1,
    });
  });

  it('names its figures by set in the manifest and the report', async () => {
    const reports = await Promise.all(WRITTEN_SETS.map((s) => evaluateWrittenExcerpts(scoringBy(() => false), s)));
    const m = writtenMetrics(reports);
    expect(m.written_selection_flat_every_excerpt_recall_at_0_5).toBe(0);
    expect(m.written_confirmation_flat_strangers_benign_no_sexual_word_benign_flagged).toBe(0);
    // The stand-in names user1, A: right for the confirmation set's excerpts whose groomer is A.
    expect(m.written_confirmation_predator_named).toBeCloseTo(sets.confirmation.filter((e) => e.predator === 'A').length / 90, 4);
    const md = writtenMarkdown(reports);
    expect(md).toContain('**The selection set** (270 excerpts');
    expect(md).toContain('**The confirmation set** (270 excerpts');
    expect(md).toContain('**The confirmation_2 set** (270 excerpts');
    expect(md).toContain('**The confirmation_3 set** (270 excerpts');
    expect(md).toContain('**The confirmation_4 set** (270 excerpts');
  });

  it('refuses a malformed or unmarked line with its file and line', () => {
    const root = mkdtempSync(join(tmpdir(), 'written-'));
    mkdirSync(join(root, 'selection'));
    const good = JSON.stringify(sets.selection[0]);
    writeFileSync(join(root, 'selection', 'x.jsonl'), `${good}\n${JSON.stringify({ ...sets.selection[0], label: 1, predator: 'neither' })}\n`);
    expect(() => loadWrittenExcerpts('selection', root)).toThrow(/x\.jsonl:2: label 1 with predator "neither"/);
    writeFileSync(join(root, 'selection', 'x.jsonl'), `${good}\n${JSON.stringify({ ...sets.selection[0], turns: [['C', 'hi'], ['A', 'yo']] })}\n`);
    expect(() => loadWrittenExcerpts('selection', root)).toThrow(/x\.jsonl:2: turn \["C","hi"\]/);
    // The rows count by the writers' marks: a line without one is refused, not counted as "no sexual word".
    const benign = sets.selection.find((e) => e.label === 0) as WrittenExcerpt;
    const { sexual_word: _dropped, ...unmarked } = benign;
    writeFileSync(join(root, 'selection', 'x.jsonl'), `${good}\n${JSON.stringify(unmarked)}\n`);
    expect(() => loadWrittenExcerpts('selection', root)).toThrow(/x\.jsonl:2: a benign excerpt without sexual_word/);
  });
});
