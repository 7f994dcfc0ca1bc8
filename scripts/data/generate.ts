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
import { createRng, hash32, type Rng } from './rng.ts';
import { toJsonl, type LabeledConversation, type PredatorLabel, type Split } from './record.ts';

/** Role A is the predator in harmful families and the initiating party in benign ones. */
type Role = 'A' | 'B';
interface Move {
  role: Role;
  text: string;
}
type AgeKind = 'adult' | 'minor' | 'any';

interface Family {
  name: string;
  harmful: boolean;
  weight: number;
  /** Ages the two roles plausibly have. */
  ages: [AgeKind, AgeKind];
  build(ctx: Ctx): Move[];
}

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

class Ctx {
  readonly rng: Rng;
  readonly split: Split;
  readonly moves: Move[] = [];
  readonly victimAge: number;
  constructor(rng: Rng, split: Split, victimAge: number) {
    this.rng = rng;
    this.split = split;
    this.victimAge = victimAge;
  }

  /** A phrasing from a bank, honouring the held-out phrasings of the test split. */
  phrase(bank: readonly string[]): string {
    const splits = phrasingSplits(bank);
    const own = this.split === 'train' ? [] : bank.filter((_, i) => splits[i] === this.split);
    const shared = bank.filter((_, i) => splits[i] === 'train');
    const pool = own.length > 0 && this.rng.chance(0.7) ? own : shared;
    return this.fill(this.rng.pick(pool.length > 0 ? pool : bank));
  }

  fill(template: string): string {
    return template.replace(/\{(\w+)\}/g, (_, slot: string) =>
      slot === 'age' ? String(this.victimAge) : this.rng.pick(P.SLOTS[slot] ?? [slot]),
    );
  }

  say(role: Role, bank: readonly string[]): void {
    let text = this.phrase(bank);
    // Real turns often carry two thoughts: small talk before or after the point.
    if (bank !== P.FILLER && this.rng.chance(0.2)) {
      const chat = this.phrase(P.FILLER);
      text = this.rng.chance(0.5) ? `${chat} ${this.rng.pick(['', '.', ',', ' -', '!'])} ${text}` : `${text} ${this.rng.pick(['', '.', ' lol', ' haha'])} ${chat}`;
      text = text.replace(/\s+/g, ' ');
    }
    this.moves.push({ role, text });
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
      if (this.rng.chance(0.9)) this.say('B', b);
    }
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

function grooming(ctx: Ctx, opener: readonly string[], minStages: number, fillerMax: number): Move[] {
  const { rng } = ctx;
  if (rng.chance(0.3)) ctx.say('B', ['hi', 'hey', 'who is this', 'hello?', 'heyy']);
  ctx.exchange(opener, P.V_FRIENDLY);
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
  }
  if (rng.chance(0.3)) ctx.say('B', rng.chance(0.5) ? P.V_COMPLY : P.V_HESITANT);
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
  if (ctx.rng.chance(0.3)) ctx.say('B', ['hi', 'hey', 'hello', 'yo', 'heyy']);
  for (let i = 0; i < n; i++) {
    ctx.exchange(a, b);
    ctx.filler(2, 0.35);
  }
  return ctx.moves;
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

function sampleAge(kind: AgeKind, rng: Rng): number {
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

export interface GenerateOptions {
  seed: number;
  n: number;
}

function chooseFamily(rng: Rng): Family {
  const total = FAMILIES.reduce((s, f) => s + f.weight, 0);
  let x = rng.next() * total;
  for (const f of FAMILIES) {
    x -= f.weight;
    if (x < 0) return f;
  }
  return FAMILIES[FAMILIES.length - 1] as Family;
}

function splitFor(family: string, id: string): Split {
  if (TEST_FAMILIES.includes(family)) return 'test';
  const h = hash32(id) % 100;
  return h < 78 ? 'train' : h < 89 ? 'val' : 'test';
}

export function generate(options: GenerateOptions): LabeledConversation[] {
  const rng = createRng(options.seed);
  const out: LabeledConversation[] = [];
  for (let i = 0; i < options.n; i++) {
    const family = chooseFamily(rng);
    const id = `gen-${options.seed}-${i}`;
    const split = splitFor(family.name, id);
    const ageA = sampleAge(family.ages[0], rng);
    const ageB = sampleAge(family.ages[1], rng);
    const ctx = new Ctx(rng, split, ageB);
    let moves = family.build(ctx);
    // Some harmful exchanges hide inside a long ordinary chat, so that several segments are needed
    // and only some of them carry the harm.
    if (family.harmful && rng.chance(0.12)) {
      const pad = new Ctx(rng, split, ageB);
      pad.filler(40, 1);
      pad.filler(30, 1);
      const cut = rng.int(0, pad.moves.length);
      moves = [...pad.moves.slice(0, cut), ...moves, ...pad.moves.slice(cut)];
    }
    // The victim writes first in about half of the harmful chats, so the predator is user2 as often as user1.
    if (family.harmful && moves[0]?.role === 'A' && rng.chance(0.3)) {
      moves = [{ role: 'B', text: ctx.fill(rng.pick(['hi', 'hey', 'who is this', 'hello?', 'heyy', 'do i know u'])) }, ...moves];
    }
    const first: Role = moves[0]?.role ?? 'A';
    const style: Style = {
      shorthand: rng.chance(0.5) ? 0.5 : 0.05,
      typo: rng.pick([0, 0.05, 0.15, 0.3]),
      emoji: rng.pick([0, 0.05, 0.2]),
      capitalize: rng.chance(0.25),
      shout: rng.chance(0.1) ? 0.1 : 0,
    };
    const conversation = render(moves, first, speakerNames(rng), rng, style);
    const predator: PredatorLabel = family.harmful ? (first === 'A' ? 'user1' : 'user2') : 'neither';
    const record: LabeledConversation = {
      id,
      conversation,
      label: family.harmful ? 1 : 0,
      predator,
      family: family.name,
      split,
      source: 'generator',
    };
    // Ages: often omitted, sometimes only one side, in all three formats. age_a is user1.
    const [ageUser1, ageUser2] = first === 'A' ? [ageA, ageB] : [ageB, ageA];
    const mode = rng.next();
    if (mode >= 0.45) {
      if (mode < 0.55 || mode >= 0.65) record.age_a = formatAge(ageUser1, rng);
      if (mode >= 0.55) record.age_b = formatAge(ageUser2, rng);
    }
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
