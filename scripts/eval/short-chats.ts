// Hand-written short chats, never used in training: model 1.1.0 scored a lone `user1: hi` at
// 1.0 (Critical). Benign ones are composed from small hand-written lists with a fixed seed (varied
// register: lowercase, typos, emoticons); predatory openers are 1-4 turns with the predator's side given.
// Targets: <= 5 % of benign flagged (> 0.5), none High Risk or Critical (>= 0.6), max benign score
// <= 0.6 (the floor), ROC-AUC short predatory vs short benign >= 0.9.

import type { Prediction } from '../../src/scoring/types.ts';
import { createRng, type Rng } from '../data/rng.ts';
import { check, fmt, round, type GuardCheck } from './guard.ts';
import { scoreInBatches, type BatchScorer } from './harness.ts';
import { mean, rocAuc } from './metrics.ts';

export interface ShortChat {
  conversation: string;
  label: 0 | 1;
  predator: 'user1' | 'user2' | 'neither';
  kind: string;
}

export const SHORT_SEED = 20260;
export const SHORT_BENIGN_MIN = 120;
export const SHORT_PREDATORY_MIN = 16;
export const SHORT_TARGETS = { benign_flagged_max: 0.05, benign_high_or_critical_max: 0, benign_max_score: 0.6, roc_auc_min: 0.9 } as const;

/** The issue's own examples, verbatim, always in the benign set. */
export const ISSUE_EXAMPLES: readonly string[] = [
  'user1: hi',
  'user1: hi\nuser2: hello',
  'user1: lol\nuser2: lmao',
  'user1: ok\nuser2: ok',
  'user1: brb',
  'user1: k',
  'user1: sup',
  'user1: gtg',
];

const GREETINGS = ['hi', 'hey', 'hello', 'heyy', 'hii', 'yo', 'sup', 'hey!', 'hiya', 'morning', 'good morning', 'wassup', 'hey whats up', 'helo', 'oi'];
const REPLIES = ['hello', 'hi', 'hey', 'yo', 'hey :)', 'heyyy', 'sup', 'not much u?', 'nm u', 'hi!', 'morning', 'wassup', 'hey hey'];
const FILLERS = ['lol', 'lmao', 'ok', 'k', 'kk', 'brb', 'gtg', 'ttyl', 'ya', 'haha', 'omg', 'xD', 'ikr', 'same', 'bye', 'cya', 'ok cool', 'nice', 'thx', 'ty', 'np'];
const CLOSERS = ['ok', 'k', 'cool', 'bye', 'ttyl', 'gtg', 'cya', 'kk', 'lol ok', 'sounds good', 'bet', 'thx', 'np', 'ok see ya'];

/** Short small talk (opening line, answer) about school, games, food, weather and thanks. */
const SMALL_TALK: ReadonlyArray<readonly [string, string]> = [
  ['did u finish the math hw', 'yeah it was easy'],
  ['is the test tmrw?', 'ya 3rd period ugh'],
  ['what did u get on the quiz', 'b+ lol'],
  ['r u going to practice', 'yea see u there'],
  ['can u send me the notes from bio', 'sure one sec'],
  ['u on tonight?', 'ya after dinner'],
  ['gg', 'gg wp'],
  ['wanna play fortnite', 'sure 5 min'],
  ['that last round was insane', 'ikr we carried'],
  ['did u beat the boss yet', 'nope its so hard'],
  ['what r we having for dinner', 'pizza i think'],
  ['im so hungry', 'same lol'],
  ['tacos or burgers', 'tacos obv'],
  ['its so cold today', 'ikr'],
  ['is it raining there', 'yea all day'],
  ['snow day tmrw??', 'i hope so'],
  ['thanks for the help', 'np'],
  ['thx for lunch', 'anytime'],
  ['happy bday!!', 'thank u!!'],
  ['did u see the game last night', 'yes what a finish'],
];

/** Parent-child logistics: (child or parent line, answer). */
const LOGISTICS: ReadonlyArray<readonly [string, string]> = [
  ['mom can u pick me up at 4', 'ok see you at the front'],
  ['dad im at jakes', 'ok be home by 9'],
  ['did u feed the dog', 'yes'],
  ['where r u', 'almost home'],
  ['practice ran late', 'ok ill wait in the car'],
  ['can i stay at emmas tonight', 'ask me when im home'],
  ['dont forget ur lunch', 'got it'],
  ['we need milk', 'ill grab some'],
  ['running 10 min late', 'np'],
  ['dinner is ready', 'coming'],
];

const EMOTICONS = [':)', ':D', 'xD', ':P', '😂', '🙂', '<3', '!!'];

/** One variation of register: as written, Capitalized, a doubled last letter (typo), or an emoticon. */
function register(text: string, rng: Rng): string {
  const x = rng.next();
  if (x < 0.5) return text;
  if (x < 0.65) return text.charAt(0).toUpperCase() + text.slice(1);
  if (x < 0.8 && /[a-z]$/.test(text)) return text + text.slice(-1);
  if (x < 0.9) return `${text} ${rng.pick(EMOTICONS)}`;
  return text.toUpperCase();
}

function render(lines: readonly string[], names: readonly [string, string] = ['user1', 'user2']): string {
  return lines.map((l, i) => `${names[i % 2]}: ${l}`).join('\n');
}

/** Benign short chats: the issue's examples first, then combinations drawn with a fixed seed. */
export function shortBenignChats(seed = SHORT_SEED, n = 140): ShortChat[] {
  const rng = createRng(seed);
  const seen = new Set<string>();
  const out: ShortChat[] = [];
  const add = (conversation: string, kind: string): void => {
    if (seen.has(conversation)) return;
    seen.add(conversation);
    out.push({ conversation, label: 0, predator: 'neither', kind });
  };
  for (const c of ISSUE_EXAMPLES) add(c, 'issue example');
  const builders: Array<() => [string, string]> = [
    () => [render([register(rng.pick(GREETINGS), rng)]), 'one greeting'],
    () => [render([register(rng.pick(FILLERS), rng)]), 'one filler'],
    () => [render([register(rng.pick(GREETINGS), rng), register(rng.pick(REPLIES), rng)]), 'greeting'],
    () => [render([register(rng.pick(FILLERS), rng), register(rng.pick(FILLERS), rng)]), 'fillers'],
    () => {
      const [a, b] = rng.pick(SMALL_TALK);
      return [render([register(a, rng), register(b, rng)]), 'small talk'];
    },
    () => {
      const [a, b] = rng.pick(SMALL_TALK);
      return [render([register(rng.pick(GREETINGS), rng), register(rng.pick(REPLIES), rng), register(a, rng), register(b, rng)]), 'greeting + small talk'];
    },
    () => {
      const [a, b] = rng.pick(SMALL_TALK);
      return [render([register(a, rng), register(b, rng), register(rng.pick(CLOSERS), rng)]), 'small talk + closer'];
    },
    () => {
      const [a, b] = rng.pick(LOGISTICS);
      const names: [string, string] = rng.chance(0.5) ? ['user1', 'user2'] : rng.pick([['mom', 'sam'], ['dad', 'lily'], ['kid', 'mom'], ['max', 'dad']] as Array<[string, string]>);
      const lines = [register(a, rng), register(b, rng)];
      if (rng.chance(0.4)) lines.push(register(rng.pick(CLOSERS), rng));
      return [render(lines, names), 'parent-child logistics'];
    },
  ];
  for (let guard = 0; out.length < n && guard < 100 * n; guard++) {
    const [conversation, kind] = rng.pick(builders)();
    add(conversation, kind);
  }
  return out;
}

/** Written out whole: short openers that carry an unmistakable predatory move. */
const HAND_PREDATORY: ReadonlyArray<Omit<ShortChat, 'label'>> = [
  { kind: 'age probe + home alone', predator: 'user1', conversation: 'user1: asl?\nuser2: 13 f\nuser1: u home alone?' },
  { kind: 'pics', predator: 'user1', conversation: 'user1: how old r u\nuser2: 12\nuser1: send me a pic of u' },
  { kind: 'cam', predator: 'user1', conversation: 'user1: u got a cam?\nuser2: ya why\nuser1: turn it on, just u and me' },
  { kind: 'move to snap', predator: 'user1', conversation: 'user1: ur cute. add me on snap\nuser2: idk\nuser1: its more private there, dont tell ur mom' },
  { kind: 'secrecy', predator: 'user1', conversation: 'user1: this is our secret ok? dont tell ur parents we talk' },
  { kind: 'meeting', predator: 'user1', conversation: 'user1: how old are u\nuser2: 14\nuser1: wanna meet up saturday? i can pick u up, just dont tell anyone' },
  { kind: 'compliment + age', predator: 'user1', conversation: 'user1: u look so mature for 13\nuser2: lol thx\nuser1: r ur parents strict? do they check ur phone' },
  { kind: 'gift', predator: 'user1', conversation: 'user1: i can buy u vbucks if u send a selfie\nuser2: rly?\nuser1: yea but keep it between us' },
  { kind: 'victim opens, age probe', predator: 'user2', conversation: 'user1: hi\nuser2: hey cutie how old r u\nuser1: 12\nuser2: r u alone rn?' },
  { kind: 'victim opens, pics', predator: 'user2', conversation: 'user1: who is this\nuser2: a friend. ur really pretty. send me a pic in ur pjs' },
  { kind: 'victim opens, snap', predator: 'user2', conversation: 'user1: hey\nuser2: asl\nuser1: 13 f\nuser2: do u have snap? delete these msgs after' },
  { kind: 'victim opens, meet', predator: 'user2', conversation: 'user1: hello?\nuser2: u seem mature for ur age\nuser1: im 14\nuser2: lets meet at the mall, dont tell ur parents' },
  { kind: 'victim opens, cam', predator: 'user2', conversation: 'user1: sup\nuser2: how old r u? u on cam?\nuser1: 13. no\nuser2: come on turn it on, nobody will know' },
  { kind: 'sextortion', predator: 'user1', conversation: 'user1: send more pics or i show everyone the ones u sent\nuser2: please no' },
  { kind: 'victim opens, secrecy', predator: 'user2', conversation: 'user1: hi\nuser2: r ur parents home?\nuser1: no\nuser2: good. our chats stay secret ok' },
  { kind: 'desensitize', predator: 'user1', conversation: 'user1: have u ever kissed anyone\nuser2: no im 12\nuser1: i could teach u. dont tell ur mom' },
];

const PROBE_AGE = ['asl?', 'how old r u', 'u 13?', 'whats ur age', 'how old are you cutie'];
const VICTIM_AGE = ['13 f', '12', 'im 14', '13', '12 m'];
const ASKS = [
  'u home alone?',
  'send me a pic',
  'got a cam?',
  'add me on snap, its more private',
  'dont tell ur parents we talk ok',
  'wanna meet up this weekend? just us',
  'ur so mature for ur age. send a selfie',
  'delete our chat after ok',
];

/** Predatory openers: the hand-written ones, then age probe + answer + ask combinations (half mirrored). */
export function shortPredatoryChats(seed = SHORT_SEED, extra = 16): ShortChat[] {
  const rng = createRng(seed + 1);
  const out: ShortChat[] = HAND_PREDATORY.map((c) => ({ ...c, label: 1 }));
  const seen = new Set(out.map((c) => c.conversation));
  for (let guard = 0; out.length < HAND_PREDATORY.length + extra && guard < 1000; guard++) {
    const lines = [rng.pick(PROBE_AGE), rng.pick(VICTIM_AGE), rng.pick(ASKS)];
    // The victim writes first in half of them, so the predator is user2 as often as user1.
    const mirrored = out.length % 2 === 1;
    const conversation = render(mirrored ? [rng.pick(['hi', 'hey', 'who is this', 'hello?']), ...lines] : lines);
    if (seen.has(conversation)) continue;
    seen.add(conversation);
    out.push({ conversation, label: 1, predator: mirrored ? 'user2' : 'user1', kind: 'age probe + ask' });
  }
  return out;
}

export interface ShortChatReport {
  benign: number;
  predatory: number;
  benign_flagged: number;
  benign_high_or_critical: number;
  benign_max_score: number;
  benign_mean_score: number;
  /** The benign chats that scored highest, for the report. */
  worst_benign: Array<{ conversation: string; harmful_score: number }>;
  predatory_recall_at_0_5: number;
  roc_auc_predatory_vs_benign: number;
  predator_named: number;
  predatory_flagged_named: string;
}

export function shortChatMetrics(benign: readonly ShortChat[], predatory: readonly ShortChat[], benignPreds: readonly Prediction[], predPreds: readonly Prediction[]): ShortChatReport {
  const b = benignPreds.map((p) => p.harmful_score);
  const p = predPreds.map((x) => x.harmful_score);
  const named = predatory.filter((c, i) => predPreds[i]?.predatory_user === c.predator).length;
  const worst = benign
    .map((c, i) => ({ conversation: c.conversation, harmful_score: Math.round((b[i] as number) * 1000) / 1000 }))
    .sort((x, y) => y.harmful_score - x.harmful_score)
    .slice(0, 5);
  return {
    benign: benign.length,
    predatory: predatory.length,
    benign_flagged: mean(b.map((s) => (s > 0.5 ? 1 : 0))),
    benign_high_or_critical: mean(b.map((s) => (s >= 0.6 ? 1 : 0))),
    benign_max_score: Math.max(...b),
    benign_mean_score: mean(b),
    worst_benign: worst,
    predatory_recall_at_0_5: mean(p.map((s) => (s > 0.5 ? 1 : 0))),
    roc_auc_predatory_vs_benign: rocAuc([...p.map(() => 1), ...b.map(() => 0)], [...p, ...b]),
    predator_named: named / Math.max(1, predatory.length),
    predatory_flagged_named: `${named} of ${predatory.length}`,
  };
}

export async function evaluateShortChats(scorer: BatchScorer): Promise<ShortChatReport> {
  const benign = shortBenignChats();
  const predatory = shortPredatoryChats();
  const bp = await scoreInBatches(scorer, benign.map((c) => ({ conversation: c.conversation })));
  const pp = await scoreInBatches(scorer, predatory.map((c) => ({ conversation: c.conversation })));
  return shortChatMetrics(benign, predatory, bp, pp);
}

/** The guard's checks, one per target in SHORT_TARGETS. */
export function shortChatChecks(s: ShortChatReport): GuardCheck[] {
  return [
    check('short chats', 'benign flagged (> 0.5)', s.benign_flagged, `<= ${SHORT_TARGETS.benign_flagged_max}`, (v) => v <= SHORT_TARGETS.benign_flagged_max),
    check('short chats', 'benign High Risk or Critical (>= 0.6)', s.benign_high_or_critical, '= 0', (v) => v <= SHORT_TARGETS.benign_high_or_critical_max),
    check('short chats', 'max benign score (floor)', s.benign_max_score, `<= ${SHORT_TARGETS.benign_max_score}`, (v) => v <= SHORT_TARGETS.benign_max_score),
    check('short chats', 'ROC-AUC predatory vs benign', s.roc_auc_predatory_vs_benign, `>= ${SHORT_TARGETS.roc_auc_min}`, (v) => v >= SHORT_TARGETS.roc_auc_min),
  ];
}

/** The guard's figures for report.metrics. */
export function shortChatFigures(s: ShortChatReport): Record<string, number> {
  return {
    short_benign_flagged: round(s.benign_flagged),
    short_benign_high_or_critical: round(s.benign_high_or_critical),
    short_benign_max_score: round(s.benign_max_score),
    short_predatory_vs_benign_roc_auc: round(s.roc_auc_predatory_vs_benign),
    short_predator_named: round(s.predator_named),
  };
}

/** The guard's section of the report. */
export function shortChatsMarkdown(s: ShortChatReport): string {
  return `### Short chats (hand-written, never trained on)
${s.benign} benign 1-4 turn chats (the issue's \`user1: hi\`, \`user1: lol\\nuser2: lmao\`... and seeded combinations)
and ${s.predatory} predatory openers. Benign flagged (> 0.5): **${fmt(s.benign_flagged)}** (target <= ${SHORT_TARGETS.benign_flagged_max});
High Risk or Critical (>= 0.6): **${fmt(s.benign_high_or_critical)}** (target 0); max benign score **${fmt(s.benign_max_score)}**
(floor ${SHORT_TARGETS.benign_max_score}); mean benign score ${fmt(s.benign_mean_score)}. Predatory openers flagged: ${fmt(s.predatory_recall_at_0_5)};
ROC-AUC predatory vs benign **${fmt(s.roc_auc_predatory_vs_benign)}** (target >= ${SHORT_TARGETS.roc_auc_min}); predator named in ${s.predatory_flagged_named}.

Highest-scoring benign short chats:
${s.worst_benign.map((w) => `- ${w.harmful_score}: \`${w.conversation.replace(/\n/g, ' / ')}\``).join('\n')}`;
}
