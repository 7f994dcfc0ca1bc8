// Long chats of the same few everyday lines said again and again, as two friends who chat every day
// write (`hey`, `wyd`, `just got back from school`, `gtg eat brb`). The chats are composed here and
// never used in training, though about half their lines are small talk the generator writes too
// (`lol same`, `im hungry`). Model 3.5.0 read some of them, flattened, as harm (0.87): every generated
// chat varied its small talk, so a long run of repeats was new to it. Each chat is scored three ways,
// with speaker prefixes and flattened onto one line:
//   - untouched (benign);
//   - with one everyday mention that shares grooming's words (`whats ur snap`, `i posted a new
//     video`, `pick me up at 4`), once, as friends write them (benign: MENTION_LINES);
//   - with SPARSE_LINES inserted by one speaker (the sparse-grooming slice's predatory lines).
// Target: the benign variants are flagged no more often than flattened benign chats may be
// (LONG_TALK_TARGETS); the rest is reported.

import type { Turn } from '../../src/scoring/types.ts';
import { createRng, type Rng } from '../data/rng.ts';
import { FLAT_TARGETS, check, fmt, round, type GuardCheck } from './guard.ts';
import { scoreInBatches, type BatchScorer } from './harness.ts';
import { atThreshold, mean, rocAuc } from './metrics.ts';
import { insertSparseLines, render, type Party, type SparseRendering } from './sparse-grooming.ts';

export const LONG_TALK_SEED = 20262;
export const LONG_TALK_CHATS = 120;
/** Messages per chat: a day's chat to a few days'. */
export const LONG_TALK_LENGTHS: readonly number[] = [60, 120, 200, 300];
/** Distinct lines a chat repeats. */
export const LONG_TALK_POOL = { min: 6, max: 20 } as const;
export const LONG_TALK_INSERTED = 5;
export const LONG_TALK_RENDERINGS: readonly SparseRendering[] = ['speakers', 'flat one line'];
/** The issue's FPR target for flat exports: long small talk is the bulk of what a moderator exports. */
export const LONG_TALK_TARGETS = { benign_flagged_max: FLAT_TARGETS.fpr_max } as const;

/** Everyday lines of teens and adults who chat daily: school, home, food, games, leaving and coming back. */
export const LONG_TALK_LINES: readonly string[] = [
  'hey', 'hi', 'sup', 'yo', 'heyyy', 'wyd', 'nm u', 'nothing much', 'what u doing', 'nm just bored',
  'lol', 'lmao', 'lol same', 'k', 'ok', 'kk', 'ya', 'ye', 'nah', 'idk', 'fr', 'ikr', 'bruh', 'omg', 'haha', 'same',
  'brb', 'back', 'ttyl', 'gn', 'gm', 'u there', 'hbu', 'nice', 'cool', 'bet',
  'just got back from school', 'just got home', 'my mom is making tacos', 'gtg eat brb', 'gtg dinner',
  'did u do the math hw', 'ya it was easy', 'that test was so hard', 'i failed it lol', 'we have a sub tmrw',
  'my brother is so annoying', 'my sister took my charger again', 'my dad says i have to clean my room',
  'wanna play fortnite', 'wanna play later', 'after dinner', 'gg', 'that game was so laggy', 'i beat the level finally',
  'im so tired', 'i cant sleep', 'same its so late', 'my mom is yelling at me to sleep', 'night',
  'lunch was so gross today', 'i missed the bus again', 'practice ran late', 'its raining so hard',
  'whats ur fav song rn', 'this song is stuck in my head', 'did u see that meme', 'lmaooo yes',
  'work was long', 'my boss is annoying', 'what r u eating', 'pizza', 'im hungry', 'ordering food',
];

/**
 * Benign lines that share grooming's words (another app, pictures, video, camera, meeting, being
 * picked up, parents away, secrets), as friends and families write them every day. A chat with one
 * of them is still benign; a model that flags it has learnt the words, not the move. None is a line
 * of a phrase bank, slots filled in; a few begin or end longer ones (`add me on snap ...` opens
 * predatory lines), which is what the row measures.
 */
export const MENTION_LINES: readonly string[] = [
  'whats ur snap', 'add me on snap', 'i posted a new video', 'did u see that video', 'we had a video call with grandma',
  'did u see that photo', 'send me the pic from the game', 'facetime later?', 'my cam is broken', 'call me later',
  'see u at school', 'wanna hang out saturday', 'pick me up at 4', 'come over after practice', 'my parents went out for dinner',
  'i was home alone all day', 'my mom checks my phone lol', 'dont tell anyone but i failed the quiz', 'its a secret lol',
  'u look cute in that pic lol', 'i love u bro', 'in bed already', 'how old is ur brother', 'im 13 lol',
];

export interface LongTalkChat {
  id: string;
  turns: Turn[];
  /** The same chat with one of MENTION_LINES, once. */
  mentioned: Turn[];
  /** The line `mentioned` adds. */
  mention: string;
  groomed: Turn[];
  predator: Party;
}

export const LONG_TALK_VARIANTS = ['untouched', 'one everyday mention', 'five predatory lines'] as const;
export type LongTalkVariant = (typeof LONG_TALK_VARIANTS)[number];

/** One chat: a pool of a few lines drawn once, then said by either side, the sides taking turns four times in five. */
function chat(rng: Rng, index: number): LongTalkChat {
  const pool = rng.shuffle([...LONG_TALK_LINES]).slice(0, rng.int(LONG_TALK_POOL.min, LONG_TALK_POOL.max));
  const length = rng.pick(LONG_TALK_LENGTHS);
  const turns: Turn[] = [];
  let speaker: Party = rng.chance(0.5) ? 'user1' : 'user2';
  for (let i = 0; i < length; i++) {
    turns.push({ speaker, text: rng.pick(pool) });
    if (rng.chance(0.8)) speaker = speaker === 'user1' ? 'user2' : 'user1';
  }
  const predator = rng.pick<Party>(['user1', 'user2']);
  const groomed = insertSparseLines(turns, LONG_TALK_INSERTED, predator, rng);
  const mentioned = [...turns];
  const at = rng.int(1, mentioned.length);
  const side = rng.pick<Party>(['user1', 'user2']);
  const mention = rng.pick(MENTION_LINES);
  mentioned.splice(at, 0, { speaker: side, text: mention });
  return { id: `long-talk-${index}`, turns, mentioned, mention, groomed, predator };
}

export function longTalkChats(seed = LONG_TALK_SEED, n = LONG_TALK_CHATS): LongTalkChat[] {
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, i) => chat(rng, i));
}

export interface LongTalkRow {
  variant: LongTalkVariant;
  rendering: SparseRendering;
  chats: number;
  median_characters: number;
  /** Share above 0.5: the benign variants' false positives, or the predatory variant's recall. */
  flagged: number;
  max_score: number;
  /** One everyday mention only: the lines whose chats rose most over the same chats untouched, most first. */
  top_mentions?: Array<{ line: string; chats: number; mean_rise: number }>;
  /** Of this variant (harmful when it has predatory lines) against the untouched chats, rendered alike. */
  roc_auc: number;
}

/** Mean rise per mention line over its chats (each line is in a few of them), the five highest. */
function topMentions(chats: readonly LongTalkChat[], mentioned: readonly number[], untouched: readonly number[]): Array<{ line: string; chats: number; mean_rise: number }> {
  const rises = new Map<string, number[]>();
  chats.forEach((c, i) => rises.set(c.mention, [...(rises.get(c.mention) ?? []), (mentioned[i] as number) - (untouched[i] as number)]));
  return [...rises]
    .map(([line, r]) => ({ line, chats: r.length, mean_rise: mean(r) }))
    .sort((a, b) => b.mean_rise - a.mean_rise)
    .slice(0, 5);
}

const turnsOf = (c: LongTalkChat, variant: LongTalkVariant): Turn[] =>
  variant === 'untouched' ? c.turns : variant === 'one everyday mention' ? c.mentioned : c.groomed;

/** The benign variants, which LONG_TALK_TARGETS applies to. */
export const LONG_TALK_BENIGN: readonly LongTalkVariant[] = ['untouched', 'one everyday mention'];

export async function evaluateLongSmallTalk(
  scorer: BatchScorer,
  variants: readonly LongTalkVariant[] = LONG_TALK_VARIANTS,
  chats: readonly LongTalkChat[] = longTalkChats(),
): Promise<LongTalkRow[]> {
  const rows: LongTalkRow[] = [];
  for (const rendering of LONG_TALK_RENDERINGS) {
    const scores = new Map<LongTalkVariant, number[]>();
    const chars = new Map<LongTalkVariant, number[]>();
    // The untouched chats are what every other variant is ranked against.
    for (const variant of new Set<LongTalkVariant>(['untouched', ...variants])) {
      const texts = chats.map((c) => render(turnsOf(c, variant), rendering));
      scores.set(variant, (await scoreInBatches(scorer, texts.map((conversation) => ({ conversation })))).map((p) => p.harmful_score));
      chars.set(variant, texts.map((t) => t.length).sort((a, b) => a - b));
    }
    const untouched = scores.get('untouched') as number[];
    for (const variant of variants) {
      const own = scores.get(variant) as number[];
      const sorted = chars.get(variant) as number[];
      rows.push({
        variant,
        rendering,
        chats: chats.length,
        median_characters: sorted[sorted.length >> 1] ?? 0,
        flagged: atThreshold(own.map(() => 1), own).recall,
        max_score: Math.max(...own),
        ...(variant === 'one everyday mention' ? { top_mentions: topMentions(chats, own, untouched) } : {}),
        roc_auc: variant === 'untouched' ? Number.NaN : rocAuc([...own.map(() => 1), ...untouched.map(() => 0)], [...own, ...untouched]),
      });
    }
  }
  return rows;
}

/** The guard's checks: each benign variant, in each rendering, against LONG_TALK_TARGETS. */
export function longTalkChecks(rows: readonly LongTalkRow[]): GuardCheck[] {
  return rows
    .filter((r) => LONG_TALK_BENIGN.includes(r.variant))
    .map((r) => check('long repeated small talk', `${r.variant}, ${r.rendering}: flagged`, r.flagged, `<= ${LONG_TALK_TARGETS.benign_flagged_max}`, (v) => v <= LONG_TALK_TARGETS.benign_flagged_max));
}

/** The guard's figures for report.metrics. */
export function longTalkFigures(rows: readonly LongTalkRow[]): Record<string, number> {
  return Object.fromEntries(rows.flatMap((r) => {
    const key = `long_talk_${r.variant.replace(/ /g, '_')}_${r.rendering.replace(/ /g, '_')}`;
    return [
      [`${key}_flagged`, round(r.flagged)],
      [`${key}_max_score`, round(r.max_score)],
      ...(r.variant === 'untouched' ? [] : [[`${key}_roc_auc`, round(r.roc_auc)]]),
    ];
  }));
}

/** The guard's section of the report. */
export function longTalkMarkdown(rows: readonly LongTalkRow[]): string {
  return `### Long repeated small talk
${rows[0]?.chats ?? 0} long benign chats composed for the eval (never in training) of ${LONG_TALK_POOL.min} to ${LONG_TALK_POOL.max} everyday lines, drawn once per chat
from ${LONG_TALK_LINES.length} (\`hey\`, \`wyd\`, \`just got back from school\`, \`gtg eat brb\`; about half are small talk the generator
writes too), said again and again for ${Math.min(...LONG_TALK_LENGTHS)} to ${Math.max(...LONG_TALK_LENGTHS)} messages, as friends who chat every day write. Each is
scored untouched, with one everyday mention that shares grooming's words (one of ${MENTION_LINES.length}, such as
${MENTION_LINES.slice(0, 3).map((m) => `\`${m}\``).join(', ')}, once; benign), and with ${LONG_TALK_INSERTED} of the sparse slice's predatory lines by one
speaker. Target: the benign variants flagged (> 0.5) <= ${LONG_TALK_TARGETS.benign_flagged_max}. ROC-AUC ranks each variant against the untouched
chats rendered alike.

| variant | rendering | chats | median characters | flagged | max score | ROC-AUC against untouched |
|---|---|---|---|---|---|---|
${rows.map((r) => `| ${r.variant} | ${r.rendering} | ${r.chats} | ${r.median_characters} | ${fmt(r.flagged)} | ${fmt(r.max_score)} | ${r.variant === 'untouched' ? '-' : fmt(r.roc_auc)} |`).join('\n')}

Mentions that raised their chats most (mean rise over the same chats untouched; a few chats each):
${rows.filter((r) => r.top_mentions !== undefined).map((r) => `- ${r.rendering}: ${(r.top_mentions ?? []).map((m) => `\`${m.line}\` ${m.mean_rise >= 0 ? '+' : ''}${fmt(m.mean_rise)} (${m.chats})`).join(', ')}`).join('\n')}`;
}
