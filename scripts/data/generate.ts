// Seeded generator of labeled two-party conversations: grooming along the published stages,
// sextortion and coercion (harmful), and benign families chosen to share their vocabulary
// (secrets, meeting up, parents, gifts, pictures). Whole families and a quarter of the phrasings of
// each phrase bank are held out for the test split (another quarter for validation), so the test
// measures generalization.
//
//   node scripts/data/generate.ts --seed 7 --n 12000 --out .tmp/data/generated.jsonl

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import * as P from './phrases.ts';
import { TRAINING_PHRASINGS } from './phrases-training.ts';
import { drawRegister, firstHarmfulLine, joinLines, registerLines, shiftLines, type Item, type RenderedLine } from './register.ts';
import { flatten, randomRecut } from './recut.ts';
import { createRng, hash32, type Rng } from './rng.ts';
import { toJsonl, type LabeledConversation, type PredatorLabel, type Split } from './record.ts';

/** Role A is the predator in harmful families and the initiating party in benign ones. */
export type Role = 'A' | 'B';
export interface Move {
  role: Role;
  text: string;
  /** A predatory move (a predator's stage line: probing age, parents, being alone, secrecy, pictures,
   * camera, another app, gifts, meeting, threats). Filler, greetings and every victim reply are false.
   * An excerpt is labelled harmful only if it keeps at least one of these. */
  harmful: boolean;
  /** Small talk any family says (greetings, filler, everyday talk), as against the family's own lines. */
  smallTalk: boolean;
}
/** minor 10-17, adult 18-62, any either; teen 13-17, young 18-30 and child 12-15 for strangers and couples (contact.ts). */
export type AgeKind = 'adult' | 'minor' | 'any' | 'teen' | 'young' | 'child';

export interface Family {
  name: string;
  harmful: boolean;
  weight: number;
  /** Ages the two roles plausibly have. */
  ages: [AgeKind, AgeKind];
  build(ctx: Ctx): Move[];
  /** The data switch that adds this family (absent: always on). */
  requires?: keyof DataSwitches;
  /**
   * An excerpt of this family is harmful once the window reaches the first harmful move, even when it
   * holds none itself: a courtship already begun is the grooming (contact.ts). Otherwise an excerpt is
   * harmful only if it keeps a harmful move.
   */
  harmFromOnset?: boolean;
}

/**
 * Each data change can be turned off for ablations (corpus.ts --without register,flat,...). All on by
 * default; all off behaves close to the generator before these changes.
 */
export interface DataSwitches {
  /** Chat register per conversation and speaker (else the old per-turn stylize). */
  register: boolean;
  /** Long chats (100-600 messages) in both classes. */
  long: boolean;
  /** The minor's replies in kind, and the minor initiating small talk. */
  inKind: boolean;
  /** Adults sexting, teens flirting, longer and messier parents/teachers/coaches, long hard negatives. */
  hardNegatives: boolean;
  /** Short chats: one-line greetings and fragments (benign), 1-6 turn predatory openers (harmful). */
  short: boolean;
  /** Windows of consecutive turns, as a moderator exports them. */
  excerpts: boolean;
  /** All text on one line without speaker prefixes. */
  flat: boolean;
  /** Re-cuts from recut.ts (split into short lines, merge speaker runs, flatten). */
  recut: boolean;
  /** The register-shift test slice (held-out transforms, test split only). */
  registerShift: boolean;
  /**
   * More wording for the relationship banks, in the train split only (phrases-training.ts). Not one of
   * DATA_SWITCHES: off unless a recipe sets PHRASINGS=1, so the recipes before it build the same corpus.
   */
  trainingPhrasings?: boolean;
  /**
   * Long, many-register lines to add to some relationship banks, by bank, in the train split only
   * (phrases-written.ts writtenWording; corpus.ts --written-wording, in no recipe yet). Not one of
   * DATA_SWITCHES, like trainingPhrasings.
   */
  writtenWording?: ReadonlyMap<readonly string[], readonly string[]>;
  /** Each side's own life said more often in relationship windows, in the train split only (contact.ts livesShare; corpus.ts --lives, off in every recipe). */
  livesSaid?: boolean;
  /**
   * Each generated record keeps the true ages of user1 and user2 (`side_ages`), whether or not the
   * request states them, for training's side-age loss (train.py --side-ages). Not one of
   * DATA_SWITCHES: off unless a recipe gives SIDE_AGES a weight, so the recipes before it build the same corpus.
   */
  sideAges?: boolean;
  /**
   * Banks that draw another split's phrasings than the record's (scripts/eval/wording.ts --banks: the
   * same chats in training wording but for these banks). Never set in a corpus.
   */
  wording?: ReadonlyMap<readonly string[], Split>;
}

/** The names of the switches that turn a data change on or off: every one of DataSwitches but the eval's `wording` view and the written lines' banks. */
export type DataSwitch = Exclude<keyof DataSwitches, 'wording' | 'writtenWording'>;
export const DATA_SWITCHES: readonly DataSwitch[] = ['register', 'long', 'inKind', 'hardNegatives', 'short', 'excerpts', 'flat', 'recut', 'registerShift'];

export function allSwitches(on = true): DataSwitches {
  return Object.fromEntries(DATA_SWITCHES.map((k) => [k, on])) as unknown as DataSwitches;
}

/** Banks whose lines are predatory moves (Move.harmful). G_CONTACT and the mentor openers are contact, not yet a move. */
const HARMFUL_BANKS = new Set<readonly string[]>([
  P.G_TRUST, P.G_RISK, P.G_SECRECY, P.G_ISOLATE, P.G_SEXUAL, P.G_COMPLY, P.G_GIFT, P.G_MEET,
  P.X_HOOK, P.X_DEMAND, P.X_THREAT, P.C_THREAT, P.G_OPENER,
]);

/** Banks of small talk that every family draws on (Move.smallTalk), besides the fixed greetings of Ctx.line. */
const SMALL_TALK_BANKS = new Set<readonly string[]>([P.FILLER, P.EVERYDAY, P.EVERYDAY_REPLY, P.B_ORDINARY, P.SHORT_TALK, P.V_INITIATE]);
/** Banks a narrow chat (repetitiveSlice) draws from a few fixed lines: its small talk and the lines that open its days. */
const NARROW_BANKS = new Set<readonly string[]>([...SMALL_TALK_BANKS, P.DAY_START]);
/** How many lines a narrow chat keeps of each such bank. */
const NARROW_LINES = { min: 2, max: 7 } as const;

/** The minor's in-kind answers: agreeing, joking, flirting back, and late on talking about the same topics. */
const IN_KIND = new Map<readonly string[], readonly (readonly string[])[]>([
  [P.V_FRIENDLY, [P.V_AGREE, P.V_FLIRT_BACK]],
  [P.V_INFO, [P.V_AGREE]],
  [P.V_COMPLY, [P.V_AGREE, P.V_FLIRT_BACK, P.V_LATE]],
  [P.V_HESITANT, [P.V_LATE, P.V_FLIRT_BACK, P.V_AGREE]],
]);

/** Families that appear only in the test split. */
export const TEST_FAMILIES: readonly string[] = ['grooming_mentor', 'coercion', 'surprise_party', 'marketplace'];

const SPLIT_OF_RANK: readonly Split[] = ['train', 'val', 'train', 'test'];
const bankSplits = new WeakMap<readonly string[], Split[]>();

/**
 * Which split each phrasing of a bank belongs to: a quarter is reserved for test and a quarter for
 * validation, so that calibration and checkpoint choice see unseen wording as far from training as
 * the test's; the other half is used by training (and by val and test 30 % of the time).
 *
 * The quarters are drawn by a hash of each phrasing's text, not by its position: banks are written
 * in order, and a position rule (every fourth for test) made the validation quarter systematically
 * easier than the test's (the same model scored the same families 0.86-0.93 on one quarter and
 * 0.55-0.80 on the other, whichever split held it), so calibration fitted on validation did not hold
 * on test. Ranked by hash, the quarters are exchangeable. Editing a bank can move other phrasings
 * between quarters, so a bank edit means a new corpus and a retrained model (docs/training.md).
 */
export function phrasingSplits(bank: readonly string[]): readonly Split[] {
  let splits = bankSplits.get(bank);
  if (splits === undefined) {
    const order = bank.map((text, index) => ({ index, h: hash32(`phrasing:${text}`) })).sort((a, b) => a.h - b.h || a.index - b.index);
    const out: Split[] = new Array<Split>(bank.length).fill('train');
    order.forEach(({ index }, rank) => {
      out[index] = SPLIT_OF_RANK[rank % 4] as Split;
    });
    splits = out;
    bankSplits.set(bank, splits);
  }
  return splits;
}

export class Ctx {
  readonly rng: Rng;
  readonly split: Split;
  readonly moves: Move[] = [];
  readonly victimAge: number;
  /** Role A's age, for the `{ageA}` slot (set by renderRecord; 0 where no bank uses it). */
  ageA = 0;
  readonly sw: DataSwitches;
  readonly tags = new Set<string>();
  /** Narrow small talk: each small-talk bank's few lines for this chat, drawn once and said again and again. */
  readonly #narrow: Map<readonly string[], string[]> | undefined;
  constructor(rng: Rng, split: Split, victimAge: number, sw: DataSwitches, narrow = false) {
    this.rng = rng;
    this.split = split;
    this.victimAge = victimAge;
    this.sw = sw;
    if (narrow) this.#narrow = new Map();
  }

  /** A phrasing from a bank, honouring the held-out phrasings of the test split. */
  phrase(bank: readonly string[]): string {
    if (this.#narrow !== undefined && NARROW_BANKS.has(bank)) return this.rng.pick(this.#narrowPool(bank, () => this.#freshPhrase(bank)));
    return this.#freshPhrase(bank);
  }

  /** The lines a narrow chat keeps for `bank`, filled in once, so the same text comes back word for word. */
  #narrowPool(bank: readonly string[], draw: () => string): string[] {
    const pools = this.#narrow as Map<readonly string[], string[]>;
    let pool = pools.get(bank);
    if (pool === undefined) {
      pool = Array.from({ length: this.rng.int(NARROW_LINES.min, NARROW_LINES.max) }, draw);
      pools.set(bank, pool);
    }
    return pool;
  }

  #freshPhrase(bank: readonly string[]): string {
    const splits = phrasingSplits(bank);
    const split = this.sw.wording?.get(bank) ?? this.split;
    const own = split === 'train' ? [] : bank.filter((_, i) => splits[i] === split);
    const shared = bank.filter((_, i) => splits[i] === 'train');
    if (split === 'train' && this.sw.trainingPhrasings === true) shared.push(...(TRAINING_PHRASINGS.get(bank) ?? []));
    if (split === 'train') shared.push(...(this.sw.writtenWording?.get(bank) ?? []));
    const pool = own.length > 0 && this.rng.chance(0.7) ? own : shared;
    return this.fill(this.rng.pick(pool.length > 0 ? pool : bank));
  }

  fill(template: string): string {
    return template.replace(/\{(\w+)\}/g, (_, slot: string) =>
      slot === 'age' ? String(this.victimAge) : slot === 'ageA' ? String(this.ageA) : this.rng.pick(P.SLOTS[slot] ?? [slot]),
    );
  }

  /** A line of `bank` for `role`; `harmful` overrides the bank's own class (a courtship line is harmful only towards a child). */
  say(role: Role, bank: readonly string[], harmful = HARMFUL_BANKS.has(bank)): void {
    let text = this.phrase(bank);
    // Real turns often carry two thoughts: small talk before or after the point.
    if (bank !== P.FILLER && this.rng.chance(0.2)) {
      const chat = this.phrase(P.FILLER);
      text = this.rng.chance(0.5) ? `${chat} ${this.rng.pick(['', '.', ',', ' -', '!'])} ${text}` : `${text} ${this.rng.pick(['', '.', ' lol', ' haha'])} ${chat}`;
      text = text.replace(/\s+/g, ' ');
    }
    this.moves.push({ role, text, harmful, smallTalk: SMALL_TALK_BANKS.has(bank) });
  }

  /** A fixed line (greetings): never a harmful move, no held-out quarter. */
  line(role: Role, options: readonly string[]): void {
    const fresh = (): string => this.fill(this.rng.pick(options));
    const text = this.#narrow === undefined ? fresh() : this.rng.pick(this.#narrowPool(options, fresh));
    this.moves.push({ role, text, harmful: false, smallTalk: true });
  }

  /** Small talk between the two parties: what real chats are mostly made of. */
  filler(maxExchanges: number, probability = 0.6): void {
    if (!this.rng.chance(probability)) return;
    const n = this.rng.int(1, maxExchanges);
    let role: Role = this.rng.chance(0.5) ? 'A' : 'B';
    for (let i = 0; i < n * 2; i++) {
      this.say(role, P.FILLER);
      if (this.rng.chance(0.8)) role = role === 'A' ? 'B' : 'A';
    }
  }

  /** One exchange: a line from `a` for role A, answered by role B from `b`. */
  exchange(a: readonly string[], b: readonly string[], times = 1): void {
    for (let i = 0; i < times; i++) {
      this.say('A', a);
      if (this.rng.chance(0.2)) this.say('A', a);
      if (this.rng.chance(0.9)) this.say('B', this.victimBank(b));
    }
  }

  /** The victim's answer bank: in kind (agree, joke, flirt back, late-stage talk) 40 % of the time. */
  victimBank(b: readonly string[]): readonly string[] {
    const alt = this.sw.inKind ? IN_KIND.get(b) : undefined;
    if (alt === undefined || !this.rng.chance(0.4)) return b;
    this.tags.add('in-kind');
    return this.rng.pick(alt);
  }

  /** Everyday talk started by either side (or by `role`). */
  everyday(role?: Role): void {
    const r: Role = role ?? (this.rng.chance(0.5) ? 'A' : 'B');
    const o: Role = r === 'A' ? 'B' : 'A';
    this.say(r, this.rng.chance(0.7) ? P.EVERYDAY : P.B_ORDINARY);
    if (this.rng.chance(0.3)) this.say(r, P.FILLER);
    if (this.rng.chance(0.85)) this.say(o, P.EVERYDAY_REPLY);
    if (this.rng.chance(0.3)) this.say(o, P.FILLER);
  }

  /** The minor starts small talk, asks a question or complains about parents or school. */
  victimInitiates(): void {
    this.say('B', P.V_INITIATE);
    if (this.rng.chance(0.85)) this.say('A', P.EVERYDAY_REPLY);
    this.tags.add('in-kind');
  }
}

// Grooming stages in the order the literature describes; a conversation walks a random
// ordered subset of them, each stage answered in the victim's voice.
const GROOMING_STAGES: Array<[readonly string[], readonly string[]]> = [
  [P.G_TRUST, P.V_FRIENDLY],
  [P.G_RISK, P.V_INFO],
  [P.G_SECRECY, P.V_COMPLY],
  [P.G_ISOLATE, P.V_COMPLY],
  [P.G_SEXUAL, P.V_HESITANT],
  [P.G_COMPLY, P.V_HESITANT],
  [P.G_GIFT, P.V_FRIENDLY],
  [P.G_MEET, P.V_HESITANT],
];

/**
 * The predator (role A) asks the age and often tells an adult age of their own: harmless moves alone
 * (strangers and teens trade ages too), so that what follows decides, and an adult's age is no sign of
 * a benign chat.
 */
function ageExchange(ctx: Ctx, probability: number): void {
  if (!ctx.rng.chance(probability)) return;
  ctx.say('A', P.AGE_PROBE);
  ctx.say('B', P.AGE_ANSWER);
  if (ctx.rng.chance(0.5)) ctx.say('A', P.AGE_SELF_ADULT);
}

function grooming(ctx: Ctx, opener: readonly string[], minStages: number, fillerMax: number): Move[] {
  const { rng } = ctx;
  if (rng.chance(0.3)) ctx.line('B', ['hi', 'hey', 'who is this', 'hello?', 'heyy']);
  if (ctx.sw.inKind && rng.chance(0.2)) ctx.victimInitiates();
  ctx.exchange(opener, P.V_FRIENDLY);
  ageExchange(ctx, 0.35);
  ctx.filler(fillerMax);
  const stages = GROOMING_STAGES.filter(() => rng.chance(0.65));
  while (stages.length < minStages) {
    const s = rng.pick(GROOMING_STAGES);
    if (!stages.includes(s)) stages.push(s);
  }
  stages.sort((x, y) => GROOMING_STAGES.indexOf(x) - GROOMING_STAGES.indexOf(y));
  for (const [a, b] of stages) {
    ctx.exchange(a, b, rng.int(1, 2));
    ctx.filler(fillerMax, 0.5);
    if (ctx.sw.inKind && rng.chance(0.3)) ctx.victimInitiates();
  }
  if (rng.chance(0.3)) ctx.say('B', ctx.victimBank(rng.chance(0.5) ? P.V_COMPLY : P.V_HESITANT));
  return ctx.moves;
}

/**
 * A long chat (100-600 messages) over several "days", mostly everyday talk (school, games, being
 * bored, work, music, food, weekends), each day opened by a line such as `gm` or `back from school`.
 * `stages` (grooming) or `hard` (benign moves that share the vocabulary) are spread thinly over the
 * days in order, so harm escalates slowly.
 */
export function longChat(ctx: Ctx, stages: ReadonlyArray<readonly [readonly string[], readonly string[]]>, hard: ReadonlyArray<readonly [readonly string[], readonly string[]]>): Move[] {
  const { rng } = ctx;
  const target = 100 + Math.floor(500 * rng.next() ** 2.2);
  const days = Math.max(2, Math.round(target / rng.int(25, 70)));
  const perDay = target / days;
  const events: Array<readonly [readonly string[], readonly string[]] | null> = [];
  // Roughly 2.6 messages per everyday event.
  const everydayEvents = Math.round(target / 2.8);
  for (let i = 0; i < everydayEvents; i++) events.push(null);
  // Special events keep their order, at increasing positions (escalation over the days).
  const special = [...stages, ...hard.map((h) => h)];
  const positions = special.map(() => rng.int(Math.floor(events.length * 0.05), events.length)).sort((a, b) => a - b);
  for (let k = special.length - 1; k >= 0; k--) events.splice(positions[k] as number, 0, special[k] as readonly [readonly string[], readonly string[]]);
  let day = 0;
  let dayEnd = perDay;
  if (rng.chance(0.5)) ctx.line(rng.chance(0.5) ? 'A' : 'B', ['hi', 'hey', 'heyy', 'yo', 'hello']);
  for (const ev of events) {
    if (ctx.moves.length >= dayEnd && day < days - 1) {
      day++;
      dayEnd += perDay;
      ctx.say(rng.chance(0.5) ? 'A' : 'B', P.DAY_START);
      if (rng.chance(0.7)) ctx.say(rng.chance(0.5) ? 'A' : 'B', P.EVERYDAY_REPLY);
    }
    if (ev !== null) {
      ctx.exchange(ev[0], ev[1], rng.int(1, 2));
      continue;
    }
    const x = rng.next();
    if (x < 0.6) ctx.everyday();
    else if (x < 0.85) ctx.filler(2, 1);
    else if (stages.length > 0 && ctx.sw.inKind) ctx.victimInitiates();
    else ctx.everyday('B');
  }
  return ctx.moves;
}

function pickStages(rng: Rng, p: number, min: number): Array<[readonly string[], readonly string[]]> {
  const stages = GROOMING_STAGES.filter(() => rng.chance(p));
  while (stages.length < min) {
    const s = rng.pick(GROOMING_STAGES);
    if (!stages.includes(s)) stages.push(s);
  }
  return stages.sort((x, y) => GROOMING_STAGES.indexOf(x) - GROOMING_STAGES.indexOf(y));
}

/** 1-6 turns whose point is one clear predatory move (asl + alone, age + compliments, pics, cam, another app, secrecy, meeting). */
function opener(ctx: Ctx): Move[] {
  const { rng } = ctx;
  if (rng.chance(0.35)) ctx.line('B', P.SHORT_TALK);
  if (rng.chance(0.3)) ctx.line('A', ['hi', 'hey', 'heyy', 'hello', 'hi there', 'sup', 'hey cutie']);
  // Half ask the age first: the probe and the answer are harmless alone (small talk asks them too),
  // the move after them is what makes the chat predatory.
  ageExchange(ctx, 0.5);
  ctx.say('A', P.G_OPENER);
  if (rng.chance(0.6)) ctx.say('B', rng.pick([P.V_FRIENDLY, P.V_INFO, P.V_HESITANT, P.SHORT_TALK]));
  if (ctx.moves.length < 5 && rng.chance(0.35)) ctx.say('A', P.G_OPENER);
  if (ctx.moves.length < 6 && rng.chance(0.3)) ctx.say('B', rng.pick([P.V_FRIENDLY, P.V_HESITANT, P.SHORT_TALK]));
  return ctx.moves;
}

/** 1-4 turns of greetings and fragments. */
function smallTalk(ctx: Ctx): Move[] {
  const { rng } = ctx;
  const n = rng.pick([1, 1, 2, 2, 2, 3, 3, 4]);
  let role: Role = 'A';
  // A third of them are everyday logistics (running late, picking up, errands): meeting talk with no grooming move.
  const logistics = ctx.sw.hardNegatives && rng.chance(0.35);
  // Some start by trading ages, as chat strangers and teens do, and go on to harmless talk.
  if (ctx.sw.hardNegatives && !logistics && rng.chance(0.2)) {
    ctx.say('A', P.AGE_PROBE);
    ctx.say('B', P.AGE_ANSWER);
    if (rng.chance(0.5)) ctx.say('A', P.AGE_SELF_ANY);
    role = 'A';
  }
  for (let i = 0; i < n; i++) {
    if (logistics) ctx.say(role, i % 2 === 0 ? P.SHORT_LOGISTICS : P.SHORT_LOGISTICS_REPLY);
    else if (rng.chance(0.5)) ctx.line(role, P.SHORT_TALK);
    else ctx.say(role, rng.pick([P.FILLER, P.EVERYDAY, P.EVERYDAY, P.EVERYDAY_REPLY]));
    if (logistics || rng.chance(0.8)) role = role === 'A' ? 'B' : 'A';
  }
  return ctx.moves;
}

/** Flirting (adults, or teens of a similar age): both sides use the same bank. */
function mutual(ctx: Ctx, bank: readonly string[], minEx: number, maxEx: number, extra: readonly string[]): Move[] {
  const { rng } = ctx;
  if (rng.chance(0.3)) ctx.line('B', ['hi', 'hey', 'heyy', 'hii']);
  const n = rng.int(minEx, maxEx);
  for (let i = 0; i < n; i++) {
    const r: Role = rng.chance(0.5) ? 'A' : 'B';
    ctx.say(r, rng.chance(0.8) ? bank : extra);
    ctx.say(r === 'A' ? 'B' : 'A', rng.chance(0.7) ? bank : extra);
    if (rng.chance(0.3)) ctx.everyday();
  }
  return ctx.moves;
}

const MENTOR_OPEN = [
  'hi, im a talent scout and your {hobby} videos are great',
  'i coach a {hobby} team and you have real potential',
  'i could help you get sponsored for {game} if youre serious',
  'im a photographer looking for new faces, you have the look',
  'i tutor {subject}, i could help you for free',
  'i run a modeling agency, want to work with me?',
];

function benign(ctx: Ctx, a: readonly string[], b: readonly string[], minEx: number, maxEx: number): Move[] {
  const n = ctx.rng.int(minEx, maxEx);
  if (ctx.rng.chance(0.3)) ctx.line('B', ['hi', 'hey', 'hello', 'yo', 'heyy']);
  // Hard negatives: parents, teachers and coaches chat longer and messier, about everyday things too.
  const longer = ctx.sw.hardNegatives ? ctx.rng.int(0, Math.ceil(maxEx * 0.8)) : 0;
  for (let i = 0; i < n + longer; i++) {
    ctx.exchange(a, b);
    ctx.filler(2, 0.35);
    if (ctx.sw.hardNegatives && ctx.rng.chance(0.3)) ctx.everyday();
  }
  return ctx.moves;
}

const LONG_FAMILY_MOVES: ReadonlyArray<readonly [readonly string[], readonly string[]]> = [
  [P.B_PARENT, P.B_CHILD],
  [P.B_TEACHER, P.B_STUDENT],
  [P.B_COACH, P.B_ATHLETE],
];
const LONG_FRIEND_MOVES: ReadonlyArray<readonly [readonly string[], readonly string[]]> = [
  [P.B_SECRETS, P.B_SECRETS_REPLY],
  [P.T_FLIRT, P.T_FLIRT],
  [P.B_GAMING, P.B_GAMING],
];
/** What two teen friends trade over days of chat: apps, videos, calls and plans twice as often as secrets or games. */
const LONG_DAILY_MOVES: ReadonlyArray<readonly [readonly string[], readonly string[]]> = [
  [P.B_FRIENDS, P.B_FRIENDS_REPLY],
  [P.B_FRIENDS, P.B_FRIENDS_REPLY],
  [P.B_SECRETS, P.B_SECRETS_REPLY],
  [P.B_GAMING, P.B_GAMING],
];
const LONG_ADULT_MOVES: ReadonlyArray<readonly [readonly string[], readonly string[]]> = [
  [P.B_FLIRT, P.B_FLIRT_REPLY],
  [P.B_SEXT, P.B_SEXT],
  [P.B_ORDINARY, P.FILLER],
];

/** A long benign chat of everyday talk with 3 to 7 hard-negative moves (family logistics, friends' secrets, adults flirting) spread through it. */
function longWithHardNegatives(name: string, weight: number, ages: [AgeKind, AgeKind], moves: readonly (readonly [readonly string[], readonly string[]])[]): Family {
  return {
    name,
    harmful: false,
    weight,
    ages,
    requires: 'long',
    build: (c) => longChat(c, [], c.sw.hardNegatives ? Array.from({ length: c.rng.int(3, 7) }, () => c.rng.pick(moves)) : []),
  };
}

const FAMILIES: Family[] = [
  { name: 'grooming_gamer', harmful: true, weight: 3, ages: ['adult', 'minor'], build: (c) => grooming(c, P.G_CONTACT, 4, 3) },
  {
    name: 'grooming_slow',
    harmful: true,
    weight: 2,
    ages: ['adult', 'minor'],
    build: (c) => grooming(c, P.G_CONTACT, 5, 8),
  },
  { name: 'grooming_fast', harmful: true, weight: 1.5, ages: ['adult', 'minor'], build: (c) => grooming(c, P.G_CONTACT, 2, 1) },
  { name: 'grooming_mentor', harmful: true, weight: 1, ages: ['adult', 'minor'], build: (c) => grooming(c, MENTOR_OPEN, 4, 3) },
  {
    name: 'sextortion',
    harmful: true,
    weight: 2,
    ages: ['any', 'minor'],
    build: (c) => {
      if (c.rng.chance(0.5)) grooming(c, P.G_CONTACT, 1, 1);
      c.exchange(P.X_HOOK, P.V_SCARED);
      c.exchange(P.X_DEMAND, P.V_SCARED, c.rng.int(1, 3));
      c.exchange(P.X_THREAT, P.V_SCARED, c.rng.int(1, 2));
      if (c.rng.chance(0.5)) c.exchange(P.X_DEMAND, P.V_SCARED);
      return c.moves;
    },
  },
  {
    name: 'coercion',
    harmful: true,
    weight: 1,
    ages: ['adult', 'minor'],
    build: (c) => {
      c.exchange(P.G_TRUST, P.V_FRIENDLY, c.rng.int(1, 2));
      c.filler(2);
      c.exchange(P.G_GIFT, P.V_FRIENDLY);
      c.exchange(P.C_THREAT, P.V_SCARED, c.rng.int(2, 4));
      if (c.rng.chance(0.5)) c.exchange(P.G_SECRECY, P.V_SCARED);
      return c.moves;
    },
  },
  { name: 'parent_child', harmful: false, weight: 2, ages: ['adult', 'minor'], build: (c) => benign(c, P.B_PARENT, P.B_CHILD, 2, 7) },
  { name: 'teacher_student', harmful: false, weight: 1.5, ages: ['adult', 'minor'], build: (c) => benign(c, P.B_TEACHER, P.B_STUDENT, 2, 6) },
  { name: 'coach_athlete', harmful: false, weight: 1.5, ages: ['adult', 'minor'], build: (c) => benign(c, P.B_COACH, P.B_ATHLETE, 2, 6) },
  { name: 'friends_secrets', harmful: false, weight: 2, ages: ['minor', 'minor'], build: (c) => benign(c, P.B_SECRETS, P.B_SECRETS_REPLY, 2, 7) },
  { name: 'gaming_trash_talk', harmful: false, weight: 2, ages: ['any', 'any'], build: (c) => benign(c, P.B_GAMING, P.B_GAMING, 3, 9) },
  { name: 'adult_flirting', harmful: false, weight: 2, ages: ['adult', 'adult'], build: (c) => benign(c, P.B_FLIRT, P.B_FLIRT_REPLY, 2, 8) },
  { name: 'health_sexed', harmful: false, weight: 1.5, ages: ['minor', 'adult'], build: (c) => benign(c, P.B_HEALTH, P.B_HEALTH_REPLY, 1, 5) },
  { name: 'tech_support', harmful: false, weight: 1.5, ages: ['adult', 'any'], build: (c) => benign(c, P.B_TECH, P.B_TECH_REPLY, 2, 6) },
  {
    name: 'ordinary_long',
    harmful: false,
    weight: 1.5,
    ages: ['any', 'any'],
    build: (c) => {
      const n = c.rng.int(10, 50);
      for (let i = 0; i < n; i++) {
        c.exchange(P.B_ORDINARY, P.FILLER);
        c.filler(3, 0.5);
      }
      return c.moves;
    },
  },
  { name: 'surprise_party', harmful: false, weight: 1, ages: ['minor', 'any'], build: (c) => benign(c, P.B_PARTY, P.B_PARTY_REPLY, 2, 6) },
  { name: 'marketplace', harmful: false, weight: 1, ages: ['adult', 'adult'], build: (c) => benign(c, P.B_MARKET, P.B_MARKET_REPLY, 2, 6) },
  // Long chats (100-600 messages), both classes: harm spread thinly over days of everyday talk.
  { name: 'long_grooming', harmful: true, weight: 2.5, ages: ['adult', 'minor'], requires: 'long', build: (c) => longChat(c, pickStages(c.rng, 0.75, 4), []) },
  { name: 'long_everyday', harmful: false, weight: 1.2, ages: ['any', 'any'], requires: 'long', build: (c) => longChat(c, [], []) },
  longWithHardNegatives('long_family', 0.5, ['adult', 'minor'], LONG_FAMILY_MOVES),
  longWithHardNegatives('long_friends', 0.5, ['minor', 'minor'], LONG_FRIEND_MOVES),
  longWithHardNegatives('long_adults', 0.4, ['adult', 'adult'], LONG_ADULT_MOVES),
  // Hard negatives: both sides sexual or flirting, no age probing of a minor, no secrecy from parents.
  { name: 'adult_sexting', harmful: false, weight: 1.5, ages: ['adult', 'adult'], requires: 'hardNegatives', build: (c) => mutual(c, P.B_SEXT, 2, 9, P.B_FLIRT) },
  { name: 'teen_flirting', harmful: false, weight: 1.5, ages: ['minor', 'minor'], requires: 'hardNegatives', build: (c) => mutual(c, P.T_FLIRT, 2, 9, P.FILLER) },
  // Short chats: greetings and fragments (benign) against 1-6 turn predatory openers (harmful).
  { name: 'short_small_talk', harmful: false, weight: 5, ages: ['any', 'any'], requires: 'short', build: smallTalk },
  { name: 'grooming_opener', harmful: true, weight: 2, ages: ['adult', 'minor'], requires: 'short', build: opener },
];

/** Benign adults' errands and coworkers: generated only by errandSlice, never for the test split. */
const ERRAND_FAMILIES: Family[] = [
  { name: 'neighbors_errands', harmful: false, weight: 1, ages: ['adult', 'adult'], build: (c) => benign(c, P.B_ERRAND, P.B_ERRAND_REPLY, 2, 7) },
  { name: 'coworkers', harmful: false, weight: 1, ages: ['adult', 'adult'], build: (c) => benign(c, P.B_WORK, P.B_WORK_REPLY, 2, 7) },
];

/** Teen friends' apps, videos, calls, pictures and plans: generated only by friendSlice, never for the test split. */
const FRIEND_FAMILIES: Family[] = [
  { name: 'teen_friends_apps', harmful: false, weight: 1, ages: ['minor', 'minor'], build: (c) => benign(c, P.B_FRIENDS, P.B_FRIENDS_REPLY, 2, 7) },
];

export const FAMILY_NAMES: readonly string[] = FAMILIES.map((f) => f.name);

// ---- surface variety: shorthand, typos, case, emoji ---------------------------------------------

const SHORTHAND: Array<[RegExp, string]> = [
  [/\byou\b/g, 'u'],
  [/\byour\b/g, 'ur'],
  [/\bare\b/g, 'r'],
  [/\bto\b/g, '2'],
  [/\bfor\b/g, '4'],
  [/\bplease\b/g, 'pls'],
  [/\bbecause\b/g, 'bc'],
  [/\bokay\b/g, 'ok'],
  [/\breally\b/g, 'rly'],
  [/\bright now\b/g, 'rn'],
  [/\bwhat\b/g, 'wat'],
  [/\bthanks\b/g, 'thx'],
  [/\btonight\b/g, '2nite'],
  [/\bpeople\b/g, 'ppl'],
];

// Words with interchangeable alternatives, swapped at random in every family alike: the model should
// learn what is being asked, not which exact word the phrase bank happened to use.
const SYNONYMS: readonly (readonly string[])[] = [
  ['parents', 'folks', 'mom and dad', 'family'],
  ['mom', 'mum', 'mother', 'mama'],
  ['dad', 'father', 'stepdad', 'pops'],
  ['pic', 'photo', 'picture', 'selfie', 'pix'],
  ['pics', 'photos', 'pictures', 'selfies'],
  ['meet', 'see', 'hang out with', 'link up with'],
  ['secret', 'private', 'between us', 'hush hush'],
  ['delete', 'erase', 'remove', 'wipe'],
  ['phone', 'cell', 'mobile', 'iphone'],
  ['money', 'cash', 'funds', 'bucks'],
  ['gift', 'present', 'surprise'],
  ['send', 'text', 'dm', 'share'],
  ['pretty', 'cute', 'beautiful', 'gorgeous'],
  ['friends', 'mates', 'buddies', 'besties'],
  ['school', 'class', 'campus'],
  ['tonight', 'later tonight', 'this evening'],
  ['talk', 'chat', 'speak', 'message'],
  ['tell', 'say to', 'mention it to'],
  ['home', 'at home', 'in the house'],
  ['camera', 'cam', 'webcam', 'facetime'],
  ['scared', 'afraid', 'nervous', 'freaked out'],
];
const SYNONYM_OF = new Map<string, readonly string[]>();
for (const group of SYNONYMS) for (const w of group) if (!w.includes(' ')) SYNONYM_OF.set(w, group);

function swapSynonyms(text: string, p: number, rng: Rng): string {
  return text.replace(/[a-z]+/g, (w) => {
    const group = SYNONYM_OF.get(w);
    return group && rng.chance(p) ? rng.pick(group) : w;
  });
}

interface Style {
  shorthand: number;
  typo: number;
  emoji: number;
  capitalize: boolean;
  shout: number;
}

function stylize(text: string, style: Style, rng: Rng): string {
  let t = swapSynonyms(text, 0.35, rng);
  for (const [re, sub] of SHORTHAND) if (rng.chance(style.shorthand)) t = t.replace(re, sub);
  if (rng.chance(style.typo) && t.length > 4) {
    const i = rng.int(1, t.length - 2);
    const kind = rng.int(0, 2);
    if (kind === 0) t = t.slice(0, i) + (t[i + 1] ?? '') + (t[i] ?? '') + t.slice(i + 2);
    else if (kind === 1) t = t.slice(0, i) + t.slice(i + 1);
    else t = t.slice(0, i) + (t[i] ?? '') + t.slice(i);
  }
  if (rng.chance(style.typo / 2)) t = t.replace(/([aeiouy])\b/, '$1$1$1');
  if (style.capitalize && t.length > 0) t = (t[0] ?? '').toUpperCase() + t.slice(1);
  if (rng.chance(style.shout)) t = t.toUpperCase();
  if (rng.chance(style.emoji)) t += ' ' + rng.pick(P.SLOTS.e ?? ['']);
  if (rng.chance(0.1)) t += rng.pick(['!', '?', '...', '!!', '.']);
  return t;
}

const NAME_STEMS = ['jake', 'emma', 'xXshadowXx', 'lil_kay', 'mike', 'sara', 'gamer', 'coolguy', 'anna', 'tom', 'brooke', 'dan', 'zz', 'nova', 'ty', 'ashley', 'K', 'j', 'lucas', 'maya'];

function speakerNames(rng: Rng): [string, string] {
  const style = rng.next();
  if (style < 0.55) return ['user1', 'user2'];
  if (style < 0.62) return ['User1', 'User2'];
  if (style < 0.66) return ['USER1', 'USER2'];
  const mk = (): string => {
    const stem = rng.pick(NAME_STEMS);
    return rng.chance(0.6) ? stem + rng.int(1, 2009) : stem;
  };
  const a = mk();
  let b = mk();
  while (b.toLowerCase() === a.toLowerCase()) b = mk();
  return [a, b];
}

// ---- ages in the three API formats ----------------------------------------------------------------

export function sampleAge(kind: AgeKind, rng: Rng): number {
  if (kind === 'teen') return rng.int(13, 17);
  if (kind === 'young') return rng.int(18, 30);
  if (kind === 'child') return rng.int(12, 15);
  if (kind === 'minor') return rng.int(10, 17);
  if (kind === 'adult') return rng.int(18, 62);
  return rng.chance(0.5) ? rng.int(12, 17) : rng.int(18, 45);
}

function formatAge(age: number, rng: Rng): string {
  const f = rng.next();
  if (f < 0.45) return String(age);
  if (f < 0.75) {
    const lo = Math.max(8, age - rng.int(0, 3));
    return `${lo}-${lo + rng.int(1, 5)}`;
  }
  return age < 18 ? 'minor' : 'adult';
}

// ---- assembling a conversation ------------------------------------------------------------------

function render(moves: Move[], first: Role, names: [string, string], rng: Rng, style: Style): string {
  const nameOf = (r: Role): string => (r === first ? names[0] : names[1]);
  const lines: string[] = [];
  let prev: Role | undefined;
  for (const m of moves) {
    const text = stylize(m.text, style, rng);
    // Same speaker again: sometimes a continuation line without a prefix, as pasted chats have.
    if (m.role === prev && rng.chance(0.3)) lines.push(text);
    else lines.push(`${nameOf(m.role)}: ${text}`);
    prev = m.role;
  }
  return lines.join('\n');
}

export interface GenerateOptions extends Partial<DataSwitches> {
  seed: number;
  n: number;
}

export function chooseFamily(rng: Rng, families: readonly Family[]): Family {
  const total = families.reduce((s, f) => s + f.weight, 0);
  let x = rng.next() * total;
  for (const f of families) {
    x -= f.weight;
    if (x < 0) return f;
  }
  return families[families.length - 1] as Family;
}

/** Split by id hash out of 100: below TRAIN_BELOW train, below VAL_BELOW validation, the rest test. */
const TRAIN_BELOW = 78;
const VAL_BELOW = 89;

function splitFor(family: string, id: string): Split {
  if (TEST_FAMILIES.includes(family)) return 'test';
  const h = hash32(id) % 100;
  return h < TRAIN_BELOW ? 'train' : h < VAL_BELOW ? 'val' : 'test';
}

/** Chats of at least this many messages count as long (tag `long`). */
export const LONG_TURNS = 100;
/** Chats of at most this many messages count as short (tag `short`). */
export const SHORT_TURNS = 6;

/**
 * A window of consecutive items, as a moderator exports part of a chat: often about 2,800
 * characters, sometimes a few lines, sometimes a few dozen. Never the whole chat.
 */
export function excerptWindow<T extends { text: string }>(items: readonly T[], rng: Rng): T[] {
  const n = items.length;
  if (n <= 2) return [...items];
  const x = rng.next();
  let start: number;
  let len: number;
  if (x < 0.65 && n > 20) {
    const target = rng.int(1200, 4500);
    start = rng.int(0, Math.max(0, n - 10));
    let chars = 0;
    len = 0;
    while (start + len < n && chars < target) chars += (items[start + len] as T).text.length + 8, len++;
  } else {
    len = x < 0.8 ? rng.int(1, 6) : rng.int(7, 40);
    len = Math.min(len, n - 1);
    start = rng.int(0, n - len);
  }
  if (len >= n) len = n - 1;
  if (start + len > n) start = n - len;
  return items.slice(start, start + len);
}

/**
 * An excerpt of a chat and its label: harmful only if the window keeps at least one harmful move, or,
 * with `fromOnset`, once the window reaches past the chat's first harmful move (Family.harmFromOnset).
 */
export function cutExcerpt(moves: readonly Move[], familyHarmful: boolean, rng: Rng, fromOnset = false): { moves: Move[]; label: 0 | 1 } {
  const indexed = moves.map((m, index) => ({ ...m, index }));
  const window = excerptWindow(indexed, rng);
  const onset = moves.findIndex((m) => m.harmful);
  const last = window[window.length - 1]?.index ?? -1;
  const harmful = window.some((m) => m.harmful) || (fromOnset && onset >= 0 && last >= onset);
  return { moves: window.map(({ index: _, ...m }) => m), label: familyHarmful && harmful ? 1 : 0 };
}

/** The moves one family of `families` builds (for tests and inspection), before any rendering. */
export function familyMoves(name: string, seed: number, split: Split = 'train', switches: Partial<DataSwitches> = {}, families: readonly Family[] = FAMILIES): Move[] {
  const family = families.find((f) => f.name === name);
  if (family === undefined) throw new Error(`unknown family ${name}`);
  const rng = createRng(seed);
  return family.build(new Ctx(rng, split, sampleAge(family.ages[1], rng), { ...allSwitches(true), ...switches }));
}

/** One family's exchange, to be hosted inside another chat (hosted.ts). Role A is the predator when harmful. */
export interface Exchange {
  family: string;
  moves: Move[];
  ageA: number;
  ageB: number;
  inKind: boolean;
}

/**
 * Draws a family of the given class, by the usual weights, among those that read as an exchange
 * rather than a whole chat (no long chats, no stand-alone small talk), honouring held-out families
 * and phrasings of `split`.
 */
export function drawExchange(rng: Rng, split: Split, harmful: boolean, sw: DataSwitches): Exchange {
  const pool = FAMILIES.filter(
    (f) =>
      f.harmful === harmful &&
      (f.requires === undefined || sw[f.requires]) &&
      f.requires !== 'long' &&
      f.name !== 'ordinary_long' &&
      f.name !== 'short_small_talk' &&
      (split === 'test' || !TEST_FAMILIES.includes(f.name)),
  );
  const family = chooseFamily(rng, pool);
  const ageA = sampleAge(family.ages[0], rng);
  const ageB = sampleAge(family.ages[1], rng);
  const ctx = new Ctx(rng, split, ageB, sw);
  const moves = family.build(ctx).map((m) => ({ ...m, text: swapSynonyms(m.text, 0.35, rng) }));
  return { family: family.name, moves, ageA, ageB, inKind: ctx.tags.has('in-kind') };
}

/** Families whose conversations are harmful. */
export const HARMFUL_FAMILIES: readonly string[] = FAMILIES.filter((f) => f.harmful).map((f) => f.name);

/** Probabilities of the training renderings; the same for every family of both classes and for real chats. */
export const RENDERING = {
  excerptLong: 0.7,
  excerpt: 0.15,
  flatExcerpt: 0.5,
  flat: 0.15,
  recut: { split: 0.12, merge: 0.08, flat: 0.08 },
} as const;

/** Turn the rendered chat text flat or re-cut it, by the switches; returns the text and its tags. */
export function finishRendering(text: string, excerpt: boolean, sw: Pick<DataSwitches, 'flat' | 'recut'>, rng: Rng): { text: string; tags: string[] } {
  const tags: string[] = [];
  if (sw.flat && rng.chance(excerpt ? RENDERING.flatExcerpt : RENDERING.flat)) return { text: flatten(text), tags: ['flat'] };
  if (sw.recut) {
    const r = randomRecut(text, rng, RENDERING.recut);
    if (r.recut === 'flat') tags.push('flat', 'recut');
    else if (r.recut !== 'none') tags.push('recut', `recut-${r.recut}`);
    return { text: r.text, tags };
  }
  return { text, tags };
}

/** Records the onset line of a harmful record whose lines `finishRendering` left intact (see LabeledConversation). */
export function setOnset(record: LabeledConversation, onsetLine: number | undefined, renderingTags: readonly string[]): void {
  if (record.label === 1 && onsetLine !== undefined && renderingTags.length === 0) record.onset_line = onsetLine;
}

/** The request's ages (age_a is user1's), and with `keepTrue` (DataSwitches.sideAges) both sides' true ages, which draw nothing. */
export function ageFields(record: LabeledConversation, ageUser1: number, ageUser2: number, rng: Rng, keepTrue = false): void {
  // Ages: often omitted, sometimes only one side, in all three formats. age_a is user1.
  const mode = rng.next();
  if (mode >= 0.45) {
    if (mode < 0.55 || mode >= 0.65) record.age_a = formatAge(ageUser1, rng);
    if (mode >= 0.55) record.age_b = formatAge(ageUser2, rng);
  }
  if (keepTrue) record.side_ages = [ageUser1, ageUser2];
}

export function generate(options: GenerateOptions): LabeledConversation[] {
  const sw: DataSwitches = { ...allSwitches(true), ...Object.fromEntries(Object.entries(options).filter(([k, v]) => (DATA_SWITCHES as string[]).includes(k) && v !== undefined)) };
  if (options.sideAges === true) sw.sideAges = true;
  const families = FAMILIES.filter((f) => f.requires === undefined || sw[f.requires]);
  const rng = createRng(options.seed);
  const out: LabeledConversation[] = [];
  for (let i = 0; i < options.n; i++) {
    const family = chooseFamily(rng, families);
    const id = `gen-${options.seed}-${i}`;
    out.push(renderRecord(family, id, splitFor(family.name, id), rng, sw));
  }
  if (sw.registerShift) out.push(...registerShiftSlice(options.seed, Math.round(options.n * 0.03), sw));
  return out;
}

/**
 * One generated record of `family`: its moves built, padded, excerpted, rendered and labelled.
 * `alwaysExcerpt` cuts every chat of more than two messages (the excerpt proxies of contact.ts).
 */
export function renderRecord(family: Family, id: string, split: Split, rng: Rng, sw: DataSwitches, narrow = false, alwaysExcerpt = false): LabeledConversation {
  const ageA = sampleAge(family.ages[0], rng);
  const ageB = sampleAge(family.ages[1], rng);
  const ctx = new Ctx(rng, split, ageB, sw, narrow);
  ctx.ageA = ageA;
  let moves = family.build(ctx);
  // Some harmful exchanges hide inside a long ordinary chat, so that several segments are needed
  // and only some of them carry the harm.
  if (family.harmful && family.name !== 'grooming_opener' && !family.name.startsWith('long_') && rng.chance(0.12)) {
    const pad = new Ctx(rng, split, ageB, sw);
    pad.filler(40, 1);
    pad.filler(30, 1);
    const cut = rng.int(0, pad.moves.length);
    moves = [...pad.moves.slice(0, cut), ...moves, ...pad.moves.slice(cut)];
  }
  // The victim writes first in about half of the harmful chats, so the predator is user2 as often as user1.
  if (family.harmful && moves[0]?.role === 'A' && rng.chance(0.3)) {
    moves = [{ role: 'B', text: ctx.fill(rng.pick(['hi', 'hey', 'who is this', 'hello?', 'heyy', 'do i know u'])), harmful: false, smallTalk: true }, ...moves];
  }
  const tags: string[] = [];
  // Excerpts: a window of consecutive messages; harmful only if it keeps a harmful move.
  let label: 0 | 1 = family.harmful ? 1 : 0;
  let familyName = family.name;
  if (sw.excerpts && moves.length > 2 && (alwaysExcerpt || rng.chance(moves.length >= LONG_TURNS ? RENDERING.excerptLong : RENDERING.excerpt))) {
    const cut = cutExcerpt(moves, family.harmful, rng, family.harmFromOnset === true);
    moves = cut.moves;
    tags.push('excerpt');
    if (family.harmful && cut.label === 0) {
      label = 0;
      familyName = `${family.name}_excerpt_benign`;
    }
  }
  const first: Role = moves[0]?.role ?? 'A';
  const names = speakerNames(rng);
  let conversation: string;
  let onsetLine: number | undefined;
  if (sw.register) {
    const items: Item[] = moves.map((m) => ({ side: m.role === first ? 0 : 1, text: swapSynonyms(m.text, 0.35, rng), harmful: m.harmful }));
    const r0 = drawRegister(rng, 0.3);
    const r1 = drawRegister(rng, 0.3, r0);
    const regs: [typeof r0, typeof r1] = first === 'A' ? [r0, r1] : [r1, r0];
    if (r0.tidy && r1.tidy) tags.push('tidy');
    const lines = registerLines(items, regs, rng);
    onsetLine = firstHarmfulLine(lines);
    conversation = joinLines(lines, names);
  } else {
    const style: Style = {
      shorthand: rng.chance(0.5) ? 0.5 : 0.05,
      typo: rng.pick([0, 0.05, 0.15, 0.3]),
      emoji: rng.pick([0, 0.05, 0.2]),
      capitalize: rng.chance(0.25),
      shout: rng.chance(0.1) ? 0.1 : 0,
    };
    conversation = render(moves, first, names, rng, style);
    onsetLine = firstHarmfulLine(moves);
  }
  const finished = finishRendering(conversation, tags.includes('excerpt'), sw, rng);
  conversation = finished.text;
  tags.push(...finished.tags);
  if (moves.length <= SHORT_TURNS) tags.push('short');
  if (moves.length >= LONG_TURNS) tags.push('long');
  if (label === 1 && ctx.tags.has('in-kind')) tags.push('in-kind');
  const predator: PredatorLabel = label === 1 ? (first === 'A' ? 'user1' : 'user2') : 'neither';
  const record: LabeledConversation = { id, conversation, label, predator, family: familyName, split, source: 'generator' };
  if (tags.length > 0) record.tags = tags;
  setOnset(record, onsetLine, finished.tags);
  const [ageUser1, ageUser2] = first === 'A' ? [ageA, ageB] : [ageB, ageA];
  ageFields(record, ageUser1, ageUser2, rng, sw.sideAges === true);
  return record;
}

/** splitFor's train and validation shares, without its test share: where a training slice's record `id` goes. */
function trainingSplitOf(id: string): Split {
  return hash32(id) % VAL_BELOW < TRAIN_BELOW ? 'train' : 'val';
}

/**
 * `count` records of `families` in the training and validation splits only, rendered as every
 * generated record is, ids `gen-SEED-NAME-i`. Their own random stream (`salt`), so the rest of the
 * corpus, and the whole test split, are those of the corpus without them.
 */
export function trainingSlice(seed: number, salt: number, name: string, families: readonly Family[], count: number, sw: DataSwitches, narrow = false): LabeledConversation[] {
  const rng = createRng((seed ^ salt) >>> 0);
  const out: LabeledConversation[] = [];
  for (let i = 0; i < count; i++) {
    const family = chooseFamily(rng, families);
    const id = `gen-${seed}-${name}-${i}`;
    out.push(renderRecord(family, id, trainingSplitOf(id), rng, sw, narrow));
  }
  return out;
}

/** Adults' errands and coworkers (ERRAND_FAMILIES), `count` records in training and validation. */
export function errandSlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  return trainingSlice(seed, 0xe22a4d, 'errand', ERRAND_FAMILIES, count, sw);
}

/**
 * Teen friends who trade handles, post videos, call and make plans (FRIEND_FAMILIES), `count` records
 * in training and validation: 3.5.0 read one `whats ur snap` or `i posted a new video` in a long
 * benign chat as a step towards harm (the eval's one everyday mention).
 */
export function friendSlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  return trainingSlice(seed, 0xf41e9d, 'friends', FRIEND_FAMILIES, count, sw);
}

/** The record tagged `narrow` (a narrow chat's small talk says a few lines again and again: Ctx's `narrow`). */
export function tagNarrow(r: LabeledConversation): LabeledConversation {
  return { ...r, tags: [...(r.tags ?? []), 'narrow'] };
}

/** Long chats in both classes, the families a narrow chat is drawn from (repetitiveSlice, only when long chats are on). */
const NARROW_FAMILIES: readonly Family[] = FAMILIES.filter((f) => f.requires === 'long' || f.name === 'ordinary_long');

/**
 * Long chats whose small talk is a few lines said again and again (`wyd`, `just got home`, `im
 * hungry`), as two friends who chat every day write, in both classes: grooming spread through such a
 * chat and benign ones alike, `count` records in the training and validation splits only (none
 * under `--without long`). Every generated chat used to vary its small talk, and 3.5.0 read a long
 * flat run of a few repeated fragments as harm (the eval's long small-talk slice: 0.87 for one of
 * them). Their own random stream, as errandSlice's.
 */
export function repetitiveSlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  if (!sw.long) return [];
  return trainingSlice(seed, 0x7e9e47, 'narrow', NARROW_FAMILIES, count, sw, true).map(tagNarrow);
}

/** Days of chat between two teen friends, benign (dailySlice only): long_friends' everyday talk with their apps and plans. */
const DAILY_FAMILY: Family = longWithHardNegatives('long_teen_daily', 1, ['minor', 'minor'], LONG_DAILY_MOVES);

/**
 * Long benign chats of two teen friends who chat every day, over days (`hey`, `wyd`, `gtg dinner`),
 * with 3 to 7 of their app, video, call, plan, secret and game exchanges spread through them, half
 * of them narrow (a few lines said again and again, as repetitiveSlice writes them), `count` records
 * in training and validation only (none under `--without long`). In the generated corpus long chats
 * between two minors are few beside long grooming, whose child writes the same everyday lines; runs
 * 57 to 59 flagged up to 8 % of the eval's long small talk flattened to one line. Benign only:
 * repetitiveSlice's grooming in narrow chats taught that one odd line in a monotonous chat is harm
 * (run 30). Their own random stream, as errandSlice's.
 */
export function dailySlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  if (!sw.long) return [];
  const rng = createRng((seed ^ 0xda117) >>> 0);
  const out: LabeledConversation[] = [];
  for (let i = 0; i < count; i++) {
    const id = `gen-${seed}-daily-${i}`;
    const narrow = rng.chance(0.5);
    const r = renderRecord(DAILY_FAMILY, id, trainingSplitOf(id), rng, sw, narrow);
    out.push(narrow ? tagNarrow(r) : r);
  }
  return out;
}

/**
 * The register-shift test slice: held-out test families rendered with ONLY the register-shift
 * transforms (never used in training). Split test, tag `register-shift`. Its own random stream, so
 * the rest of the corpus does not depend on it.
 */
export function registerShiftSlice(seed: number, count: number, sw: DataSwitches): LabeledConversation[] {
  const rng = createRng((seed ^ 0x5eed5) >>> 0);
  const families = FAMILIES.filter((f) => TEST_FAMILIES.includes(f.name));
  const out: LabeledConversation[] = [];
  for (let i = 0; i < count; i++) {
    const family = rng.pick(families);
    const ageA = sampleAge(family.ages[0], rng);
    const ageB = sampleAge(family.ages[1], rng);
    const ctx = new Ctx(rng, 'test', ageB, sw);
    const moves = family.build(ctx);
    const first: Role = moves[0]?.role ?? 'A';
    const items: Item[] = moves.map((m) => ({ side: m.role === first ? 0 : 1, text: m.text }));
    const { lines, shifts } = shiftLines(items, rng);
    const record: LabeledConversation = {
      id: `gen-${seed}-shift-${i}`,
      conversation: joinLines(lines as RenderedLine[], speakerNames(rng)),
      label: family.harmful ? 1 : 0,
      predator: family.harmful ? (first === 'A' ? 'user1' : 'user2') : 'neither',
      family: family.name,
      split: 'test',
      source: 'generator',
      tags: ['register-shift', ...shifts.map((s) => `shift-${s}`)],
    };
    const [ageUser1, ageUser2] = first === 'A' ? [ageA, ageB] : [ageB, ageA];
    ageFields(record, ageUser1, ageUser2, rng, sw.sideAges === true);
    out.push(record);
  }
  return out;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { seed: { type: 'string', default: '7' }, n: { type: 'string', default: '12000' }, out: { type: 'string' } },
  });
  const records = generate({ seed: Number(values.seed), n: Number(values.n) });
  const text = toJsonl(records);
  if (values.out) {
    mkdirSync(dirname(values.out), { recursive: true });
    writeFileSync(values.out, text);
    console.error(`generated ${records.length} conversations -> ${values.out}`);
  } else process.stdout.write(text);
}
