// Two kinds of real chat the corpus lacked, in both classes (issue 32): first contact between
// strangers on anonymous chat sites, and a relationship already under way. Real grooming excerpts
// showed the model flagging strangers' age/sex/location small talk ("chat register + an age = danger",
// since only predators traded ages in the corpus) and missing an adult's courtship of a child that
// reads as affection and everyday care. Here the same register, the same talk of ages and the same
// affection occur in both classes; what differs is who says what to whom:
//
// - harmful: an adult who learns the other is a child and goes on (compliments, sexual questions,
//   pictures, a camera, another app, a meeting); an adult courting a child whose side is school, a
//   parent at home, a bedtime, being grounded;
// - benign: strangers who are adults, or stated peers of any age, flirting, adults' sexual talk, a
//   disconnect; an adult who learns the other is a child and leaves; adult partners (work, rent, their
//   kids), two teenagers, a parent caring for a child.
//
// Where harm begins (Family.harmFromOnset): at the adult's first predatory move, which here is the
// first line of pursuit after learning the other is a child, or the first courtship line to a child.
// Every excerpt that reaches past it is harmful, even a window of care and small talk alone: in real
// grooming chats the courtship fills most of the conversation, and a window of it is the grooming.
// Before it, a window is benign (strangers trading ages is not yet harm).
//
// Each slice has its own random stream, so the rest of the corpus is the one without it.

import * as C from './phrases-contact.ts';
import * as P from './phrases.ts';
import { chooseFamily, longChat, renderRecord, tagNarrow, trainingSlice, type Ctx, type DataSwitches, type Family, type Move, type Role } from './generate.ts';
import { flatten } from './recut.ts';
import { createRng } from './rng.ts';
import type { LabeledConversation } from './record.ts';

const other = (r: Role): Role => (r === 'A' ? 'B' : 'A');

/** `starter` says a line of `a`, the other side answers from `b` most of the time. */
function turn(ctx: Ctx, starter: Role, a: readonly string[], b: readonly string[], harmful = false): void {
  ctx.say(starter, a, harmful);
  if (ctx.rng.chance(0.25)) ctx.say(starter, a, harmful);
  if (ctx.rng.chance(0.9)) ctx.say(other(starter), b);
}

/** Greetings and the age/sex/location ritual; `bStates` makes role B state their age (so A learns it). */
function ritual(ctx: Ctx, bStates: boolean): void {
  const { rng } = ctx;
  if (rng.chance(0.8)) {
    const first: Role = rng.chance(0.5) ? 'A' : 'B';
    ctx.say(first, C.ST_HELLO);
    if (rng.chance(0.7)) ctx.say(other(first), C.ST_HELLO);
  }
  if (rng.chance(0.5)) {
    ctx.say('A', C.ST_ASL);
    if (bStates || rng.chance(0.8)) ctx.say('B', C.ST_ASL_B);
    if (rng.chance(0.7)) ctx.say('A', C.ST_ASL_A);
  } else {
    ctx.say('B', C.ST_ASL);
    ctx.say('A', C.ST_ASL_A);
    if (bStates || rng.chance(0.8)) ctx.say('B', C.ST_ASL_B);
  }
}

type Topic = readonly [readonly string[], readonly string[]];
const STRANGER_TOPICS: readonly Topic[] = [
  [C.ST_WHERE, C.ST_WHERE_REPLY],
  [C.ST_BORED, C.ST_BORED],
  [C.ST_NICE, C.ST_NICE_REPLY],
  [C.ST_FLIRT, C.ST_FLIRT_REPLY],
  [C.ST_HANDLE, C.ST_HANDLE_REPLY],
  [C.ST_LINK, C.ST_LINK_REPLY],
];
const ADULT_TOPICS: readonly Topic[] = [...STRANGER_TOPICS, [C.ST_ADULT_TALK, C.ST_ADULT_TALK], [C.ST_ADULT_TALK, P.EVERYDAY_REPLY]];
const PEER_TOPICS: readonly Topic[] = [...STRANGER_TOPICS, [C.ST_PEER_TALK, C.ST_PEER_TALK], [C.ST_PEER_TALK, P.EVERYDAY_REPLY], [P.T_FLIRT, P.T_FLIRT]];

/** `min` to `max` topics of small talk, either side starting each. */
function smallTalk(ctx: Ctx, topics: readonly Topic[], min: number, max: number): void {
  const n = ctx.rng.int(min, max);
  for (let i = 0; i < n; i++) {
    const [a, b] = ctx.rng.pick(topics);
    turn(ctx, ctx.rng.chance(0.5) ? 'A' : 'B', a, b);
  }
}

/** How a first contact ends: a disconnect, a goodbye, or just stops. */
function ending(ctx: Ctx): void {
  const x = ctx.rng.next();
  if (x < 0.3) ctx.say(ctx.rng.chance(0.5) ? 'A' : 'B', C.ST_DISCONNECT);
  else if (x < 0.55) ctx.say(ctx.rng.chance(0.5) ? 'A' : 'B', C.RL_BYE);
}

function strangers(ctx: Ctx, topics: readonly Topic[], sexualShare: number, sexualBanks: readonly Topic[]): Move[] {
  ritual(ctx, false);
  smallTalk(ctx, topics, 2, 8);
  if (ctx.rng.chance(sexualShare)) {
    const n = ctx.rng.int(1, 5);
    for (let i = 0; i < n; i++) {
      const [a, b] = ctx.rng.pick(sexualBanks);
      turn(ctx, ctx.rng.chance(0.6) ? 'A' : 'B', a, b);
    }
  }
  if (ctx.rng.chance(0.4)) smallTalk(ctx, topics, 1, 3);
  ending(ctx);
  return ctx.moves;
}

/** An adult learns the other is a child and leaves, or the child learns the other is an adult and leaves. */
function leaves(ctx: Ctx): Move[] {
  ritual(ctx, true);
  if (ctx.rng.chance(0.4)) smallTalk(ctx, STRANGER_TOPICS, 1, 2);
  if (ctx.rng.chance(0.65)) {
    ctx.say('A', C.ST_ADULT_LEAVES);
    if (ctx.rng.chance(0.5)) ctx.say('B', ctx.rng.pick([C.ST_CHILD_REPLY, C.ST_DISCONNECT, C.RL_BYE]));
  } else {
    if (!ctx.moves.some((m) => m.role === 'A' && /\d/.test(m.text))) ctx.say('A', C.ST_ASL_A);
    ctx.say('B', C.ST_CHILD_LEAVES);
    if (ctx.rng.chance(0.4)) ctx.say('A', ctx.rng.pick([C.ST_DISCONNECT, C.ST_NICE_REPLY]));
  }
  return ctx.moves;
}

const PURSUIT_SEXUAL: readonly Topic[] = [
  [C.ST_ADULT_SEX, C.ST_CHILD_REPLY],
  [P.G_SEXUAL, P.V_HESITANT],
  [P.G_COMPLY, C.ST_CHILD_REPLY],
];
const PURSUIT_QUIET: readonly Topic[] = [
  [C.ST_FLIRT, C.ST_FLIRT_REPLY],
  [C.ST_HANDLE, C.ST_HANDLE_REPLY],
  [C.ST_CAM, C.ST_CHILD_REPLY],
  [P.G_ISOLATE, P.V_COMPLY],
  [P.G_MEET, C.ST_CHILD_REPLY],
  [P.G_SECRECY, P.V_COMPLY],
  [P.G_TRUST, P.V_FRIENDLY],
];

/**
 * An adult learns the other is a child and goes on. Every line of the adult's from the first
 * `ST_PURSUE` on is a predatory move; `topics` are the moves of pursuit.
 */
function pursuit(ctx: Ctx, topics: readonly Topic[]): Move[] {
  ritual(ctx, true);
  if (ctx.rng.chance(0.5)) smallTalk(ctx, STRANGER_TOPICS.slice(0, 3), 1, 2);
  ctx.say('A', C.ST_PURSUE, true);
  if (ctx.rng.chance(0.7)) ctx.say('B', C.ST_CHILD_REPLY);
  const n = ctx.rng.int(2, 8);
  for (let i = 0; i < n; i++) {
    const [a, b] = ctx.rng.pick(topics);
    turn(ctx, 'A', a, b, true);
    // The child threatens to leave, and the adult talks them round.
    if (ctx.rng.chance(0.12)) {
      ctx.say('B', C.ST_DISCONNECT);
      ctx.say('A', C.ST_PURSUE, true);
    }
    if (ctx.rng.chance(0.2)) turn(ctx, ctx.rng.chance(0.5) ? 'A' : 'B', C.ST_BORED, C.ST_BORED);
  }
  ending(ctx);
  return ctx.moves;
}

// ---- a relationship under way ---------------------------------------------------------------------

const AFFECTION: Topic = [C.RL_AFFECTION, C.RL_AFFECTION_REPLY];
const CARE: Topic = [C.RL_CARE, C.RL_CARE_REPLY];
const CALL: Topic = [C.RL_CALL, C.RL_CALL_REPLY];
const PLANS: Topic = [C.RL_PLANS, C.RL_PLANS_REPLY];
const GIFT: Topic = [C.RL_GIFT, C.RL_GIFT_REPLY];
const JEALOUS: Topic = [C.RL_JEALOUS, C.RL_JEALOUS_REPLY];

/** A courtship under way: affection most of all, then care, calls, plans, parcels and jealousy. */
const COURTSHIP: readonly Topic[] = [AFFECTION, AFFECTION, CARE, CALL, PLANS, GIFT, JEALOUS];
/** Plans, rides, rooms and parcels: a courtship after the two have met (held out for the test split). */
const COURTSHIP_MET: readonly Topic[] = [PLANS, PLANS, GIFT, AFFECTION, CALL];
/** Calls, missing and parcels: partners who live apart (held out for the test split). */
const DISTANCE: readonly Topic[] = [CALL, AFFECTION, GIFT, CARE];
/** What two teenagers going out say: affection, calls, jealousy, care, flirting; no rooms or rides. */
const TEEN_COUPLE: readonly Topic[] = [AFFECTION, CALL, JEALOUS, CARE, [P.T_FLIRT, P.T_FLIRT]];

/**
 * The share of a relationship's events in which role A says a line of their own life: `usual`, or
 * 0.24 in the train split with `livesSaid` (`corpus.ts --lives`; off in every recipe), taken from
 * everyday small talk. 3.10.0 found the harmful windows in which the adult says a line of their life
 * no more often than those without one (docs/training.md, "Wording, not talk"); heard about twice as
 * often in every relationship family alike (a courting adult's, partners', a teen's, a parent's), a
 * side's life was to be no cue alone, only who holds which beside the other's. It was not (run 75).
 * Validation, test and the proxies keep the usual share.
 */
function livesShare(ctx: Ctx, usual: number): number {
  return ctx.split === 'train' && ctx.sw.livesSaid === true ? 0.24 : usual;
}

interface Lives {
  /** Role A's life around the chat, and role B's. */
  a: readonly string[];
  b: readonly string[];
}

/**
 * A window into a relationship: no greeting or introduction, mostly `topics` started by role A (both
 * roles when `mutual`), with each side's life and everyday talk between. `harmful` makes each of
 * role A's courtship lines a predatory move.
 */
function relationship(ctx: Ctx, topics: readonly Topic[], lives: Lives, harmful: boolean, mutual: boolean): Move[] {
  const { rng } = ctx;
  const saidA = 0.68 + livesShare(ctx, 0.12);
  const events = rng.int(6, 28);
  for (let i = 0; i < events; i++) {
    const x = rng.next();
    if (x < 0.5) {
      const [a, b] = rng.pick(topics);
      const starter: Role = mutual && rng.chance(0.45) ? 'B' : 'A';
      turn(ctx, starter, a, b, harmful && starter === 'A');
    } else if (x < 0.68) {
      ctx.say('B', lives.b);
      if (rng.chance(0.7)) {
        const bank = rng.pick([P.EVERYDAY_REPLY, C.RL_CARE, C.RL_AFFECTION]);
        ctx.say('A', bank, harmful && bank !== P.EVERYDAY_REPLY);
      }
    } else if (x < saidA) {
      ctx.say('A', lives.a);
      if (rng.chance(0.7)) ctx.say('B', P.EVERYDAY_REPLY);
    } else if (x < 0.95) ctx.everyday();
    else ctx.say(rng.chance(0.5) ? 'A' : 'B', C.RL_BYE);
  }
  return ctx.moves;
}

/**
 * A parent's care: affection and care, never a room, a ride at night or a secret. The parent's work
 * comes up too, so an adult's life beside a child's is no cue on its own.
 */
function parentCare(ctx: Ctx): Move[] {
  const saidA = 0.8 + livesShare(ctx, 0.1);
  const events = ctx.rng.int(4, 18);
  for (let i = 0; i < events; i++) {
    const x = ctx.rng.next();
    if (x < 0.45) turn(ctx, 'A', C.PARENT_CARE, P.B_CHILD);
    else if (x < 0.65) turn(ctx, 'A', C.RL_CARE, C.RL_CARE_REPLY);
    else if (x < 0.8) {
      ctx.say('B', C.CHILD_LIFE);
      if (ctx.rng.chance(0.7)) ctx.say('A', ctx.rng.pick([C.PARENT_CARE, P.EVERYDAY_REPLY]));
    } else if (x < saidA) {
      ctx.say('A', C.ADULT_LIFE);
      if (ctx.rng.chance(0.6)) ctx.say('B', P.EVERYDAY_REPLY);
    } else ctx.everyday();
  }
  return ctx.moves;
}

const CHILD: Lives = { a: C.ADULT_LIFE, b: C.CHILD_LIFE };

/**
 * An adult's pickups and rides with a child (a parent, a coach, an aunt): who waits where and when,
 * with the child's practice and the adult's work between, and now and then a parent's care. Often a
 * few lines only. Run 51 read `practice ran late / ok ill wait in the car` as a courtship (0.613),
 * since only a courting adult ever offered a ride in the corpus.
 */
function rides(ctx: Ctx): Move[] {
  const events = ctx.rng.int(1, 10);
  for (let i = 0; i < events; i++) {
    const x = ctx.rng.next();
    // The answer's bank is picked whole: a bank spread into a new one would draw its held-out
    // phrasings anew (phrasingSplits ranks a bank's own lines), leaking them into training.
    if (x < 0.35) turn(ctx, 'B', C.RIDE_CHILD, ctx.rng.pick([C.RIDE_ADULT, C.RIDE_REPLY]));
    else if (x < 0.65) turn(ctx, 'A', C.RIDE_ADULT, ctx.rng.pick([C.RIDE_CHILD, C.RIDE_REPLY]));
    else if (x < 0.75) turn(ctx, 'A', C.PARENT_CARE, P.B_CHILD);
    else if (x < 0.85) {
      ctx.say('B', C.CHILD_LIFE);
      if (ctx.rng.chance(0.6)) ctx.say('A', C.RIDE_REPLY);
    } else if (x < 0.93) {
      ctx.say('A', C.ADULT_LIFE);
      if (ctx.rng.chance(0.6)) ctx.say('B', C.RIDE_REPLY);
    } else ctx.everyday();
  }
  return ctx.moves;
}

/** Pickups and rides between an adult and a child: benign, in no test family (rideSlice, rideTestChats). */
export const RIDE_FAMILY: Family = { name: 'rides_child', harmful: false, weight: 1, ages: ['adult', 'minor'], build: rides };

/** First contact between strangers (training, validation and test), by class. */
export const STRANGER_FAMILIES: readonly Family[] = [
  { name: 'stranger_adults', harmful: false, weight: 2, ages: ['young', 'young'], build: (c) => strangers(c, ADULT_TOPICS, 0.35, [[C.ST_ADULT_SEX, C.ST_ADULT_SEX_REPLY]]) },
  { name: 'stranger_peers', harmful: false, weight: 2, ages: ['teen', 'teen'], build: (c) => strangers(c, PEER_TOPICS, 0.2, [[P.T_FLIRT, P.T_FLIRT], [C.ST_FLIRT, C.ST_FLIRT_REPLY]]) },
  { name: 'stranger_leaves', harmful: false, weight: 1.2, ages: ['young', 'child'], build: leaves },
  { name: 'stranger_pursuit', harmful: true, weight: 2.5, ages: ['adult', 'child'], harmFromOnset: true, build: (c) => pursuit(c, [...PURSUIT_SEXUAL, ...PURSUIT_QUIET]) },
];

/** A relationship under way (training, validation and test), by class. */
export const COURTSHIP_FAMILIES: readonly Family[] = [
  { name: 'courtship_child', harmful: true, weight: 2.5, ages: ['adult', 'minor'], harmFromOnset: true, build: (c) => relationship(c, COURTSHIP, CHILD, true, false) },
  { name: 'partners_adult', harmful: false, weight: 1.2, ages: ['adult', 'adult'], build: (c) => relationship(c, [...COURTSHIP, [P.B_SEXT, P.B_SEXT]], { a: C.ADULT_LIFE, b: C.ADULT_LIFE }, false, true) },
  { name: 'teen_couple', harmful: false, weight: 1.2, ages: ['teen', 'teen'], build: (c) => relationship(c, TEEN_COUPLE, { a: C.CHILD_LIFE, b: C.CHILD_LIFE }, false, true) },
  { name: 'parent_care', harmful: false, weight: 1, ages: ['adult', 'minor'], build: parentCare },
];

/**
 * Families of both kinds that only the test split holds, so the proxies measure a kind of chat the
 * model never trained on: adults' sexual first contact, a pursuit with no sexual word, a courtship
 * after the two have met, and partners who live apart.
 */
const STRANGER_TEST_FAMILIES: readonly Family[] = [
  { name: 'stranger_adults_sexual', harmful: false, weight: 1, ages: ['young', 'young'], build: (c) => strangers(c, ADULT_TOPICS, 1, [[C.ST_ADULT_SEX, C.ST_ADULT_SEX_REPLY], [P.B_SEXT, P.B_SEXT]]) },
  { name: 'stranger_pursuit_quiet', harmful: true, weight: 1, ages: ['adult', 'child'], harmFromOnset: true, build: (c) => pursuit(c, PURSUIT_QUIET.slice(0, 4)) },
];
const COURTSHIP_TEST_FAMILIES: readonly Family[] = [
  { name: 'courtship_met', harmful: true, weight: 1, ages: ['adult', 'minor'], harmFromOnset: true, build: (c) => relationship(c, COURTSHIP_MET, CHILD, true, false) },
  { name: 'partners_distance', harmful: false, weight: 1, ages: ['adult', 'adult'], build: (c) => relationship(c, DISTANCE, { a: C.ADULT_LIFE, b: C.ADULT_LIFE }, false, true) },
];
export const CONTACT_TEST_FAMILIES: readonly Family[] = [...STRANGER_TEST_FAMILIES, ...COURTSHIP_TEST_FAMILIES];

/** Every contact family, in the order the proxies draw them from. */
const ALL_CONTACT_FAMILIES: readonly Family[] = [...STRANGER_FAMILIES, ...COURTSHIP_FAMILIES, ...CONTACT_TEST_FAMILIES];

type ContactKind = 'stranger' | 'courtship';
const KIND_OF = new Map<string, ContactKind>([
  ...[...STRANGER_FAMILIES, ...STRANGER_TEST_FAMILIES].map((f): [string, ContactKind] => [f.name, 'stranger']),
  ...[...COURTSHIP_FAMILIES, ...COURTSHIP_TEST_FAMILIES].map((f): [string, ContactKind] => [f.name, 'courtship']),
]);

/**
 * Two stated teenagers whose first contact turns to sexual talk: benign by label (neither is an adult),
 * and by policy scored in the Medium Risk band, which reviewers sample (MODEL_CARD.md). Only the eval
 * draws it (peerSexualChats); no training slice holds it yet.
 */
export const PEER_SEXUAL_FAMILY: Family = {
  name: 'stranger_peers_sexual',
  harmful: false,
  weight: 1,
  ages: ['teen', 'teen'],
  build: (c) => strangers(c, PEER_TOPICS, 1, [[C.ST_PEER_SEXUAL, C.ST_PEER_SEXUAL_REPLY], [C.ST_FLIRT, C.ST_FLIRT_REPLY]]),
};

/** `count` chats of PEER_SEXUAL_FAMILY in the test split (held-out phrasings), their own stream. */
export function peerSexualChats(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  const rng = createRng((seed ^ 0x9ee25e) >>> 0);
  return Array.from({ length: count }, (_, i) => renderRecord(PEER_SEXUAL_FAMILY, `gen-${seed}-peers-sexual-${i}`, 'test', rng, sw));
}

/** The kind of chat each family is: the proxies' slices (eval) group by it. */
export function contactKind(family: string): ContactKind | undefined {
  return KIND_OF.get(family.replace(/_excerpt_benign$/, ''));
}

/** `count` first contacts between strangers, both classes, in training and validation. */
export function strangerSlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  return trainingSlice(seed, 0x57a2e5, 'strangers', STRANGER_FAMILIES, count, sw);
}

/**
 * The benign first contacts in which a young age is stated: stated teen peers, and an adult who learns
 * the other is a child and leaves. Models trained on strangerSlice alone flagged a tenth of such chats
 * with no sexual word (docs/training.md): an adult's and a child's age side by side, or a teenager's
 * small talk, read as the start of a pursuit, since the harmful first contacts outnumber them.
 */
const ASL_FAMILIES: readonly Family[] = STRANGER_FAMILIES.filter((f) => f.name === 'stranger_peers' || f.name === 'stranger_leaves');

/** `count` benign first contacts with a young age stated (ASL_FAMILIES), in training and validation (ASL in the recipes; 0 before 3.8.0, 1,000 in 3.8.0, 2,000 in 3.9.0, 3,000 since 3.10.0). */
export function aslSlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  return trainingSlice(seed, 0xa51a9e, 'asl', ASL_FAMILIES, count, sw);
}

// ---- long chats between stated peers --------------------------------------------------------------

/**
 * What a courtship's child says of their life and what teen friends trade, said between two teens:
 * school, a parent at home, a bedtime, a ride, a handle, a call, a tease.
 */
const TEEN_MENTIONS: readonly Topic[] = [
  [C.CHILD_LIFE, P.EVERYDAY_REPLY], [C.CHILD_LIFE, C.CHILD_LIFE], [C.RIDE_CHILD, P.EVERYDAY_REPLY],
  [P.B_FRIENDS, P.B_FRIENDS_REPLY], [P.T_FLIRT, P.T_FLIRT], CALL,
];
/** The same between two young adults: work, a ride, a handle, a call, a tease. */
const ADULT_MENTIONS: readonly Topic[] = [[C.ADULT_LIFE, P.EVERYDAY_REPLY], [C.RIDE_CHILD, P.EVERYDAY_REPLY], [P.B_FRIENDS, P.B_FRIENDS_REPLY], [C.ST_FLIRT, C.ST_FLIRT_REPLY], CALL];

/** Days of everyday talk with one to three `mentions` spread through them. */
function mentioned(ctx: Ctx, mentions: readonly Topic[]): Move[] {
  return longChat(ctx, [], Array.from({ length: ctx.rng.int(1, 3) }, () => ctx.rng.pick(mentions)));
}

/** A first contact that goes on: the ritual, ages stated, some small talk, then days of everyday talk. */
function contactGoesOn(ctx: Ctx, topics: readonly Topic[], mentions: readonly Topic[]): Move[] {
  ritual(ctx, true);
  smallTalk(ctx, topics, 2, 5);
  return mentioned(ctx, mentions);
}

/**
 * Long benign chats between stated peers that carry a courtship's everyday words: two teen friends'
 * days with a parent, a bedtime or a ride in them, and first contacts between stated peers (teens, or
 * young adults) that go on into days of everyday talk. Runs 51, 62 and 63 showed that more
 * relationship windows flag long flat small talk with one such mention and strangers' benign age talk:
 * in the corpus, a child's everyday line in a long chat, and a stated age, came mostly from courtships.
 */
const PEER_LONG_FAMILIES: readonly Family[] = [
  { name: 'long_peers_mentions', harmful: false, weight: 2, ages: ['teen', 'teen'], requires: 'long', build: (c) => mentioned(c, TEEN_MENTIONS) },
  { name: 'stranger_peers_long', harmful: false, weight: 1, ages: ['teen', 'teen'], requires: 'long', build: (c) => contactGoesOn(c, PEER_TOPICS, TEEN_MENTIONS) },
  { name: 'stranger_adults_long', harmful: false, weight: 1, ages: ['young', 'young'], requires: 'long', build: (c) => contactGoesOn(c, ADULT_TOPICS, ADULT_MENTIONS) },
];

/** `count` long benign chats between stated peers (PEER_LONG_FAMILIES), half of them narrow, in training and validation (PEERS in the recipes; 0 before 3.10.0, 2,000 since 3.10.0). */
export function peerSlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  if (!sw.long) return [];
  const narrow = Math.floor(count / 2);
  return [
    ...trainingSlice(seed, 0x9ee201, 'peers', PEER_LONG_FAMILIES, count - narrow, sw),
    ...trainingSlice(seed, 0x9ee202, 'peers-narrow', PEER_LONG_FAMILIES, narrow, sw, true).map(tagNarrow),
  ];
}

// ---- first contacts between stated peers that go on a little -----------------------------------

/**
 * A first contact between stated peers that goes on for about as many lines as a pursuit: the ritual,
 * ages stated, small talk, then a few lines of each one's life (school, a parent, a bedtime, work, a
 * call, a tease), and an ending. Runs 62 and 64 flagged more of the strangers' benign age talk with
 * more relationship windows: after an age is stated, only a pursuit went on past small talk, and a
 * child's everyday line in it was a courtship's.
 */
function contactGoesOnAWhile(ctx: Ctx, topics: readonly Topic[], mentions: readonly Topic[]): Move[] {
  ritual(ctx, true);
  smallTalk(ctx, topics, 1, 4);
  const n = ctx.rng.int(2, 7);
  for (let i = 0; i < n; i++) {
    const [a, b] = ctx.rng.pick(ctx.rng.chance(0.6) ? mentions : topics);
    turn(ctx, ctx.rng.chance(0.5) ? 'A' : 'B', a, b);
  }
  ending(ctx);
  return ctx.moves;
}

const PEER_CONTACT_FAMILIES: readonly Family[] = [
  { name: 'stranger_peers_more', harmful: false, weight: 2, ages: ['teen', 'teen'], build: (c) => contactGoesOnAWhile(c, PEER_TOPICS, TEEN_MENTIONS) },
  { name: 'stranger_adults_more', harmful: false, weight: 1, ages: ['young', 'young'], build: (c) => contactGoesOnAWhile(c, ADULT_TOPICS, ADULT_MENTIONS) },
];

/** `count` first contacts between stated peers that go on a little (PEER_CONTACT_FAMILIES), in training and validation (CONTACTS in the recipes; 0 before 3.10.0, 2,000 since 3.10.0). */
export function peerContactSlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  return trainingSlice(seed, 0x9ec0a7, 'contacts', PEER_CONTACT_FAMILIES, count, sw);
}

/** `count` windows of relationships under way, both classes, in training and validation. */
export function courtshipSlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  return trainingSlice(seed, 0xc0a27e, 'courtship', COURTSHIP_FAMILIES, count, sw);
}

/**
 * `count` chats of an adult's pickups and rides with a child, benign, in training and validation: the
 * benign side of a courtship's plans (RIDES in the recipes; 0 in every release).
 */
export function rideSlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  return trainingSlice(seed, 0x21de5, 'rides', [RIDE_FAMILY], count, sw);
}

/** `count` ride chats in the test split (held-out phrasings), their own stream: the eval's everyday-rides proxy. */
export function rideTestChats(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  const rng = createRng((seed ^ 0x21de7) >>> 0);
  return Array.from({ length: count }, (_, i) => renderRecord(RIDE_FAMILY, `gen-${seed}-rides-test-${i}`, 'test', rng, sw));
}

/**
 * The proxies' test chats: `count` records of every contact family, the held-out ones included,
 * in the test split with its held-out phrasings, rendered as any generated record (excerpts, flat,
 * re-cut). Their own stream, independent of the training slices, so a model trained without the
 * slices is measured on the same chats.
 */
export function contactTestSlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  const rng = createRng((seed ^ 0x7e57c0) >>> 0);
  const out: LabeledConversation[] = [];
  for (let i = 0; i < count; i++) {
    const family = chooseFamily(rng, ALL_CONTACT_FAMILIES);
    const record = renderRecord(family, `gen-${seed}-contact-test-${i}`, 'test', rng, sw);
    out.push({ ...record, tags: [...(record.tags ?? []), `contact-${contactKind(family.name) ?? 'other'}`] });
  }
  return out;
}

/** The longest flat excerpt the short-excerpt proxy keeps: real grooming excerpts under it ranked backwards in 3.5.0. */
export const SHORT_EXCERPT_CHARS = 1000;

/**
 * Flat excerpts under SHORT_EXCERPT_CHARS characters of every contact family, as a moderator exports a
 * few lines of a chat: each chat cut to a window (labelled by Family.harmFromOnset's rule), then put
 * on one line without speaker names. Their own stream, `count` chats drawn; longer excerpts are left out.
 */
export function contactShortExcerpts(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  const rng = createRng((seed ^ 0x5e0c27) >>> 0);
  const out: LabeledConversation[] = [];
  for (let i = 0; i < count; i++) {
    const family = chooseFamily(rng, ALL_CONTACT_FAMILIES);
    const record = renderRecord(family, `gen-${seed}-contact-short-${i}`, 'test', rng, sw, false, true);
    const conversation = flatten(record.conversation);
    if (conversation.length >= SHORT_EXCERPT_CHARS) continue;
    const { onset_line: _, ...rest } = record;
    const tags = [...new Set([...(record.tags ?? []).filter((t) => !t.startsWith('recut')), 'flat', `contact-${contactKind(family.name) ?? 'other'}`])];
    out.push({ ...rest, conversation, predator: rest.label === 1 ? rest.predator : 'neither', tags });
  }
  return out;
}
