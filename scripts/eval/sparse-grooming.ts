// Sparse grooming inside real chats: a few hand-written predatory lines (never used in training, not
// from the generator's phrase banks) inserted by one speaker into held-out real benign test chats,
// scored against the same chats untouched, as written, with each speaker's runs merged, and
// flattened. A proxy for the issue's real moderator exports (flat text of about 2,800 characters in
// which grooming is a few lines among everyday talk), which the project does not hold. Targets for
// the one-line flat rendering are the issue's targets for those exports (FLAT_TARGETS); the other
// rows are reported. The guard's checks, figures and report section are at the end.

import type { ScoreRequest, Turn } from '../../src/scoring/types.ts';
import { createRng, type Rng } from '../data/rng.ts';
import { REAL_SOURCES } from '../data/real.ts';
import type { LabeledConversation } from '../data/record.ts';
import { mergeSpeakerRuns, renderTurns, turnsOf } from '../data/recut.ts';
import { FLAT_TARGETS, check, fmt, round, type GuardCheck } from './guard.ts';
import { deterministicSubsample, scoreInBatches, type BatchScorer } from './harness.ts';
import { atThreshold, cutAtFpr, mean, rocAuc } from './metrics.ts';

/** Age, being alone, secrecy, pictures and camera, another app, gifts, meeting, flattery: the moves the issue names. */
export const SPARSE_LINES: readonly string[] = [
  'what grade r u in again',
  'u act way older than the girls in ur class',
  'anyone else at ur place right now',
  'when does ur dad get back from work',
  'do ur parents go thru ur messages',
  'keep this just u n me k',
  'wipe this convo when ur done',
  'ur mum would freak if she saw this so dont show her',
  'snap me a selfie real quick',
  'any pics from the pool party',
  'hop on facetime with me for a sec',
  'hit me up on telegram this site is weird',
  'ill send u my whatsapp',
  'i could swing by ur school friday',
  'we could hang at the mall just the two of us',
  'ill get u robux if u want',
  'ur honestly so cute',
  'ever done more than kissing',
  'any boys u like',
  'im the only one who really gets u',
  'wanna be my gf for real',
  'which part of town r u in',
  'vent to me anytime, im not like ur parents',
  'wear something nice next time u cam',
  'are u in bed rn',
  'lock ur door first',
];

export const SPARSE_SEED = 20261;
export const SPARSE_HOSTS = 200;
export const SPARSE_MIN_TURNS = 20;
export const SPARSE_COUNTS: readonly number[] = [3, 5];
export const SPARSE_GUARDED = { lines: 5, rendering: 'flat one line' } as const;
/** How the report and its checks name the guarded row. */
export const SPARSE_GUARDED_LABEL = `${SPARSE_GUARDED.lines} lines, ${SPARSE_GUARDED.rendering}`;
// merged runs: each speaker's consecutive lines joined into one turn, as some clients export a burst.
// An inserted line then rides inside a long turn of everyday talk, the weakest rendering seen in
// real-use probes.
export const RENDERINGS = ['speakers', 'merged runs', 'flat one line', 'flat lines'] as const;
/** The renderings that keep speakers, so the report can say whom the model named. */
const NAMED_RENDERINGS: ReadonlySet<SparseRendering> = new Set(['speakers', 'merged runs']);
export type SparseRendering = (typeof RENDERINGS)[number];

export type Party = 'user1' | 'user2';

interface SparseHost {
  id: string;
  turns: Turn[];
}

export interface SparsePair extends SparseHost {
  groomed: Turn[];
  predator: Party;
}

/**
 * Real benign test chats from the licensed sets (REAL_SOURCES: never an operator's import such as
 * PAN12) as written (no rendering tag but chat register), of at least SPARSE_MIN_TURNS turns, one per
 * line, every one of them by user1 or user2; ordered by id.
 */
function sparseHosts(test: readonly LabeledConversation[], hosts: number): SparseHost[] {
  const eligible = test.filter((r) => r.label === 0 && REAL_SOURCES.has(r.source) && (r.tags ?? []).every((t) => t === 'chat-register'));
  const withTurns = eligible.flatMap((r) => {
    const turns = turnsOf(r.conversation);
    const oneTurnPerLine = turns.length === r.conversation.split('\n').length && turns.every((t) => t.speaker !== 'unknown');
    return oneTurnPerLine && turns.length >= SPARSE_MIN_TURNS ? [{ id: r.id, turns }] : [];
  });
  // Sorted: the subsample keeps input order when it takes every host, and the draws follow the order.
  return deterministicSubsample(withTurns, hosts, 'sparse-grooming').sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** `turns` with `lines` distinct SPARSE_LINES by `predator`, each at a seeded place after the first turn. */
export function insertSparseLines(turns: readonly Turn[], lines: number, predator: Party, rng: Rng): Turn[] {
  return insertAt(turns, rng.shuffle([...SPARSE_LINES]).slice(0, lines), predator, rng);
}

/** `turns` with each of `texts` by `predator` at a seeded place after the first turn. */
function insertAt(turns: readonly Turn[], texts: readonly string[], predator: Party, rng: Rng): Turn[] {
  const groomed = [...turns];
  for (const text of texts) groomed.splice(rng.int(1, groomed.length), 0, { speaker: predator, text });
  return groomed;
}

/** Each host gets `lines` predatory lines from one seeded speaker. */
function groom(hosts: readonly SparseHost[], lines: number): SparsePair[] {
  const rng = createRng(SPARSE_SEED + lines);
  return hosts.map(({ id, turns }) => {
    const predator = rng.pick<Party>(['user1', 'user2']);
    return { id, turns, groomed: insertSparseLines(turns, lines, predator, rng), predator };
  });
}

export function sparsePairs(test: readonly LabeledConversation[], lines: number, hosts = SPARSE_HOSTS): SparsePair[] {
  return groom(sparseHosts(test, hosts), lines);
}

export function render(turns: readonly Turn[], rendering: SparseRendering): string {
  if (rendering === 'speakers') return renderTurns(turns);
  if (rendering === 'merged runs') return mergeSpeakerRuns(renderTurns(turns));
  if (rendering === 'flat lines') return renderTurns(turns.map((t) => ({ speaker: 'unknown', text: t.text })));
  return turns.map((t) => t.text).join(' ');
}

/** Lower bounds, in characters, of the length bands the slice's recall is also reported by. */
export const SPARSE_LENGTH_BANDS: readonly number[] = [0, 1500, 2500];

export interface SparseLengthBand {
  /** At least this many characters... */
  min_characters: number;
  /** ...and fewer than this many; null for the last band, which has no upper bound. */
  below_characters: number | null;
  chats: number;
  /** NaN when no chat falls in the band. */
  recall_at_0_5: number;
}

/** Recall at 0.5 of the groomed chats in each SPARSE_LENGTH_BANDS band; `lengths` and `scores` pair up by index. */
export function recallByLength(lengths: readonly number[], scores: readonly number[]): SparseLengthBand[] {
  if (lengths.length !== scores.length) throw new Error(`recallByLength: ${lengths.length} lengths for ${scores.length} scores`);
  return SPARSE_LENGTH_BANDS.map((min, b) => {
    const below = SPARSE_LENGTH_BANDS[b + 1] ?? null;
    const inBand = scores.filter((_, i) => (lengths[i] as number) >= min && (below === null || (lengths[i] as number) < below));
    return { min_characters: min, below_characters: below, chats: inBand.length, recall_at_0_5: inBand.length === 0 ? Number.NaN : inBand.filter((x) => x > 0.5).length / inBand.length };
  });
}

/** A band as the report writes it: "under 1,500", "1,500 to 2,499", "2,500 or more" (characters). */
export function lengthBandLabel(b: SparseLengthBand): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  if (b.below_characters === null) return `${n(b.min_characters)} or more`;
  return b.min_characters === 0 ? `under ${n(b.below_characters)}` : `${n(b.min_characters)} to ${n(b.below_characters - 1)}`;
}

/** A band as a metric key part: chars_0_1499, chars_1500_2499, chars_2500_plus. */
export function lengthBandKey(b: SparseLengthBand): string {
  return `chars_${b.min_characters}_${b.below_characters === null ? 'plus' : b.below_characters - 1}`;
}

export interface SparseRow {
  lines: number;
  rendering: SparseRendering;
  pairs: number;
  median_characters: number;
  /** Recall at 0.5 by the groomed chat's length in characters (SPARSE_LENGTH_BANDS): the issue's exports are about 2,800. */
  recall_by_length: SparseLengthBand[];
  roc_auc: number;
  recall_at_0_5: number;
  /** Of the same hosts untouched, rendered the same way. */
  fpr_at_0_5: number;
  /** At the flat cut (FlatRenderingReport.cut_at_target_fpr): recall of the groomed chats, FPR of their hosts. */
  recall_at_flat_cut: number;
  fpr_at_flat_cut: number;
  /**
   * The cut at which FLAT_TARGETS.fpr_max of the untouched hosts (real benign chats) are flagged, and
   * the recall there: the issue's "flagged with <= 5 % of the other excerpts flagged" read against
   * real benign chats alone, where the flat cut reads it against the generator's hard negatives too.
   */
  host_cut: number;
  recall_at_host_cut: number;
  /** Among flagged groomed chats; renderings with speakers only (flat text names nobody by design). */
  predator_named_flagged: number;
}

/** `flatCut`: the cut at which the model flags the target share of flattened benign test chats (NaN: not reported). */
export async function evaluateSparseGrooming(scorer: BatchScorer, test: readonly LabeledConversation[], flatCut = Number.NaN): Promise<SparseRow[]> {
  const hosts = sparseHosts(test, SPARSE_HOSTS);
  if (hosts.length === 0) return [];
  const ask = (chats: readonly Turn[][], rendering: SparseRendering): ScoreRequest[] => chats.map((turns) => ({ conversation: render(turns, rendering) }));
  // The untouched hosts, and so their cut, are the same for every count of inserted lines: once per rendering.
  const hostScores = new Map<SparseRendering, { scores: number[]; cut: number }>();
  for (const rendering of RENDERINGS) {
    const scores = (await scoreInBatches(scorer, ask(hosts.map((h) => h.turns), rendering))).map((p) => p.harmful_score);
    hostScores.set(rendering, { scores, cut: cutAtFpr(scores.map(() => 0), scores, FLAT_TARGETS.fpr_max) });
  }
  const rows: SparseRow[] = [];
  for (const lines of SPARSE_COUNTS) {
    const pairs = groom(hosts, lines);
    for (const rendering of RENDERINGS) {
      const { scores: untouched, cut: hostCut } = hostScores.get(rendering) as { scores: number[]; cut: number };
      const requests = ask(pairs.map((p) => p.groomed), rendering);
      const preds = await scoreInBatches(scorer, requests);
      const groomed = preds.map((p) => p.harmful_score);
      const chars = requests.map((r) => r.conversation.length).sort((a, b) => a - b);
      const labels = [...groomed.map(() => 1), ...untouched.map(() => 0)];
      const scores = [...groomed, ...untouched];
      const at = atThreshold(labels, scores);
      // No cut given: nothing to report (a NaN cut would flag nothing and read as recall 0).
      const atCut = Number.isFinite(flatCut) ? atThreshold(labels, scores, flatCut) : undefined;
      rows.push({
        lines,
        rendering,
        pairs: pairs.length,
        median_characters: chars[chars.length >> 1] as number,
        recall_by_length: recallByLength(requests.map((r) => r.conversation.length), groomed),
        roc_auc: rocAuc(labels, scores),
        recall_at_0_5: at.recall,
        fpr_at_0_5: at.fpr,
        recall_at_flat_cut: atCut?.recall ?? Number.NaN,
        fpr_at_flat_cut: atCut?.fpr ?? Number.NaN,
        host_cut: hostCut,
        recall_at_host_cut: atThreshold(labels, scores, hostCut).recall,
        predator_named_flagged:
          NAMED_RENDERINGS.has(rendering)
            ? mean(preds.flatMap((p, i) => (p.harmful_score > 0.5 ? [p.predatory_user === pairs[i]?.predator ? 1 : 0] : [])))
            : Number.NaN,
      });
    }
  }
  return rows;
}

/**
 * One move alone: each of SPARSE_LINES said SPARSE_MOVE_REPEATS times by one speaker in every host, so
 * the report shows which moves the model reads on their own and which only beside others. Reported,
 * not guarded: a single line such as a secret between friends is no grooming by itself, but a
 * moderator needs to know which of these a model cannot see.
 */
export const SPARSE_MOVE_REPEATS = 3;
export const SPARSE_MOVE_RENDERINGS = ['speakers', 'flat one line'] as const satisfies readonly SparseRendering[];
export type SparseMoveRendering = (typeof SPARSE_MOVE_RENDERINGS)[number];

export interface SparseMoveRow {
  line: string;
  rendering: SparseMoveRendering;
  hosts: number;
  /** Share of the hosts flagged (> 0.5) with the line inserted. */
  flagged: number;
  mean_score: number;
}

/**
 * The hosts with `line` said SPARSE_MOVE_REPEATS times by one seeded speaker each. One seed for every
 * line: each line lands in the same places and with the same speaker, so the lines' rows are paired.
 */
export function sparseMoveChats(test: readonly LabeledConversation[], line: string, hosts = SPARSE_HOSTS): SparsePair[] {
  return moveChats(sparseHosts(test, hosts), line);
}

function moveChats(hosts: readonly SparseHost[], line: string): SparsePair[] {
  if (!SPARSE_LINES.includes(line)) throw new Error(`not a sparse line: ${line}`);
  const rng = createRng(SPARSE_SEED + 100);
  return hosts.map(({ id, turns }) => {
    const predator = rng.pick<Party>(['user1', 'user2']);
    return { id, turns, groomed: insertAt(turns, Array<string>(SPARSE_MOVE_REPEATS).fill(line), predator, rng), predator };
  });
}

/** Rows line by line, renderings in SPARSE_MOVE_RENDERINGS order; none when the split has no host. */
export async function evaluateSparseMoves(scorer: BatchScorer, test: readonly LabeledConversation[]): Promise<SparseMoveRow[]> {
  const hosts = sparseHosts(test, SPARSE_HOSTS);
  if (hosts.length === 0) return [];
  const rows: SparseMoveRow[] = [];
  for (const line of SPARSE_LINES) {
    const chats = moveChats(hosts, line);
    for (const rendering of SPARSE_MOVE_RENDERINGS) {
      const scores = (await scoreInBatches(scorer, chats.map((c) => ({ conversation: render(c.groomed, rendering) })))).map((p) => p.harmful_score);
      rows.push({ line, rendering, hosts: chats.length, flagged: mean(scores.map((x) => (x > 0.5 ? 1 : 0))), mean_score: mean(scores) });
    }
  }
  return rows;
}

/** How many moves alone flag at least half of their chats, per rendering. */
export function movesRecognised(rows: readonly SparseMoveRow[], rendering: SparseMoveRendering): number {
  return rows.filter((r) => r.rendering === rendering && r.flagged >= 0.5).length;
}

// ---- the guard "sparse grooming in real chats" ---------------------------------------------------

export interface SparseGuardReport {
  sparse_grooming: SparseRow[];
  /** Each sparse line alone, said a few times: reported, not guarded. */
  sparse_moves: SparseMoveRow[];
}

/** `flatCut`: the flat renderings' cut at the target FPR (FlatRenderingReport.cut_at_target_fpr). */
export async function sparseGuard(scorer: BatchScorer, test: readonly LabeledConversation[], flatCut: number): Promise<SparseGuardReport> {
  return { sparse_grooming: await evaluateSparseGrooming(scorer, test, flatCut), sparse_moves: await evaluateSparseMoves(scorer, test) };
}

/** The row the targets apply to (SPARSE_GUARDED), if the split had hosts. */
function guardedRow(rows: readonly SparseRow[]): SparseRow | undefined {
  return rows.find((r) => r.lines === SPARSE_GUARDED.lines && r.rendering === SPARSE_GUARDED.rendering);
}

/** The guard's checks: the guarded row against FLAT_TARGETS (n/a when the split has no host). */
export function sparseChecks(g: SparseGuardReport): GuardCheck[] {
  const row = guardedRow(g.sparse_grooming);
  return [
    check('sparse grooming in real chats', `${SPARSE_GUARDED_LABEL}: ROC-AUC`, row?.roc_auc ?? Number.NaN, `>= ${FLAT_TARGETS.roc_auc_min}`, (v) => v >= FLAT_TARGETS.roc_auc_min),
    check('sparse grooming in real chats', `${SPARSE_GUARDED_LABEL}: recall at 0.5`, row?.recall_at_0_5 ?? Number.NaN, `>= ${FLAT_TARGETS.recall_min}`, (v) => v >= FLAT_TARGETS.recall_min),
    check('sparse grooming in real chats', `${SPARSE_GUARDED_LABEL}: FPR at 0.5`, row?.fpr_at_0_5 ?? Number.NaN, `<= ${FLAT_TARGETS.fpr_max}`, (v) => v <= FLAT_TARGETS.fpr_max),
  ];
}

/** The guard's figures for report.metrics: every row, the guarded row's host cut and recall by length, and the moves alone. */
export function sparseFigures(g: SparseGuardReport): Record<string, number> {
  const guarded = guardedRow(g.sparse_grooming);
  return {
    ...Object.fromEntries(g.sparse_grooming.flatMap((r) => {
      const key = `sparse_${r.lines}_${r.rendering.replace(/ /g, '_')}`;
      return [
        [`${key}_roc_auc`, round(r.roc_auc)],
        [`${key}_recall_at_0_5`, round(r.recall_at_0_5)],
        [`${key}_fpr_at_0_5`, round(r.fpr_at_0_5)],
        [`${key}_recall_at_flat_cut`, round(r.recall_at_flat_cut)],
        [`${key}_recall_at_host_cut`, round(r.recall_at_host_cut)],
        ...(r === guarded
          ? [[`${key}_host_cut`, round(r.host_cut)], ...r.recall_by_length.map((b) => [`${key}_recall_at_0_5_${lengthBandKey(b)}`, round(b.recall_at_0_5)])]
          : []),
      ];
    })),
    ...Object.fromEntries(SPARSE_MOVE_RENDERINGS.flatMap((rendering) => {
      const rows = g.sparse_moves.filter((r) => r.rendering === rendering);
      const key = rendering.replace(/ /g, '_');
      return rows.length === 0 ? [] : [
        [`sparse_moves_recognised_${key}`, movesRecognised(g.sparse_moves, rendering)],
        [`sparse_moves_mean_flagged_${key}`, round(mean(rows.map((r) => r.flagged)))],
      ];
    })),
  };
}

/** The guard's section of the report; `flatCut` as for sparseGuard. */
export function sparseMarkdown(g: SparseGuardReport, flatCut: number): string {
  return `### Sparse grooming in real chats
${g.sparse_grooming[0]?.pairs ?? 0} held-out real benign test chats as written (at least ${SPARSE_MIN_TURNS} turns), each scored untouched and with 3 or 5 of
${SPARSE_LINES.length} hand-written predatory lines (age, being alone, secrecy, pictures, camera, another app, gifts,
meeting; never in training) inserted by one speaker at seeded places: a proxy for the issue's real
moderator exports, where grooming is a few lines among everyday talk. FPR counts the same chats
untouched, rendered the same way. *merged runs* joins each speaker's consecutive lines into one turn, as
some clients export a burst, so an inserted line rides inside a long turn of everyday talk. Targets
(the issue's for real flat exports) apply to ${SPARSE_GUARDED_LABEL}.
The flat cut is the one above (${fmt(flatCut)}), at which ${FLAT_TARGETS.fpr_max} of the flattened benign test chats are flagged
(the generator's hard negatives among them). The host cut is the row's own, at which ${FLAT_TARGETS.fpr_max} of its untouched
real hosts are flagged: the issue's "${FLAT_TARGETS.recall_min} flagged with <= ${FLAT_TARGETS.fpr_max} of the other excerpts flagged" read
against real benign chats alone (reported, not guarded; the guard is at 0.5, one threshold for every chat).

| lines | rendering | pairs | median characters | ROC-AUC | recall at 0.5 | FPR at 0.5 | recall / FPR at the flat cut | host cut; recall there | predator named (flagged) |
|---|---|---|---|---|---|---|---|---|---|
${g.sparse_grooming.map((r) => `| ${r.lines} | ${r.rendering} | ${r.pairs} | ${r.median_characters} | ${fmt(r.roc_auc)} | ${fmt(r.recall_at_0_5)} | ${fmt(r.fpr_at_0_5)} | ${fmt(r.recall_at_flat_cut)} / ${fmt(r.fpr_at_flat_cut)} | ${fmt(r.host_cut)}; ${fmt(r.recall_at_host_cut)} | ${fmt(r.predator_named_flagged)} |`).join('\n')}
${sparseLengthLine(g.sparse_grooming)}

One move alone: each line said ${SPARSE_MOVE_REPEATS} times by one speaker in every host (the same places and speaker for
every line), nothing else added, so the rows show which moves the model reads on their own and which
only beside others (reported, not guarded: a friend's secret is no grooming by itself, but a
moderator should know what goes unseen).
${g.sparse_moves.length === 0 ? '' : `Moves that flag at least half of their chats: ${SPARSE_MOVE_RENDERINGS.map((r) => `${r} ${movesRecognised(g.sparse_moves, r)} of ${SPARSE_LINES.length}`).join(', ')}.`}

${sparseMoveTable(g.sparse_moves)}`;
}

/** The guarded row's recall by length: the slice's chats are shorter than the issue's exports (about 2,800 characters). */
function sparseLengthLine(rows: readonly SparseRow[]): string {
  const row = guardedRow(rows);
  if (row === undefined) return '';
  const band = (b: SparseLengthBand): string => `${lengthBandLabel(b)} characters ${fmt(b.recall_at_0_5)} (${b.chats} chats)`;
  return `\n${SPARSE_GUARDED_LABEL}, recall at 0.5 by the chat's length (the issue's exports run to about 2,800 characters): ${row.recall_by_length.map(band).join('; ')}.`;
}

/** One row per line, weakest first (by its chats flagged over both renderings), a flagged share and mean score per rendering. */
function sparseMoveTable(rows: readonly SparseMoveRow[]): string {
  if (rows.length === 0) return '(no host in the test split)';
  const lines = [...new Set(rows.map((r) => r.line))];
  const of = (line: string): SparseMoveRow[] => SPARSE_MOVE_RENDERINGS.map((rendering) => rows.find((r) => r.line === line && r.rendering === rendering) as SparseMoveRow);
  const sum = (line: string): number => of(line).reduce((a, r) => a + r.flagged, 0);
  lines.sort((a, b) => sum(a) - sum(b) || SPARSE_LINES.indexOf(a) - SPARSE_LINES.indexOf(b));
  return [
    `| line | ${SPARSE_MOVE_RENDERINGS.map((r) => `${r}: flagged, mean score`).join(' | ')} |`,
    `|---|${SPARSE_MOVE_RENDERINGS.map(() => '---').join('|')}|`,
    ...lines.map((line) => `| \`${line}\` | ${of(line).map((r) => `${fmt(r.flagged)}, ${fmt(r.mean_score)}`).join(' | ')} |`),
  ].join('\n');
}
