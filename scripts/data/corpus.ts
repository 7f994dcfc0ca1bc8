// Assembles the training corpus: generated conversations, the real benign chats in ../shared/data
// and any operator data (JSONL or PAN12), into one JSONL of LabeledConversation records.
//
//   node scripts/data/corpus.ts --out .tmp/data/corpus.jsonl [--seed 7] [--n 16000]
//        [--data my.jsonl ...] [--pan12 convs.xml --pan12-predators ids.txt] [--no-real] [--no-synthetic]
//        [--without register,long,inKind,hardNegatives,short,excerpts,flat,recut,registerShift,newRealSets,hosted]
//        [--thin-share 0.3] [--errands 1500] [--repetitive 1000] [--friends 1500]
//        [--strangers 3000] [--courtship 3000] [--rides 2000] [--asl 2000] [--daily 1500] [--peers 2000] [--contacts 2000] [--texting] [--phrasings] [--written-wording [--written-banks A,B]] [--written-windows 5] [--written-windows-flat 5] [--written-window-batches 2] [--written-contacts 3] [--written-contacts-flat 3] [--lives] [--side-ages]
//
// --without turns data changes off for ablations (all on by default; see DataSwitches in generate.ts).
// --thin-share is the share of hosted guests thinned to a few scattered lines (hosted.ts; 0: none).
// --errands adds that many chats of adults' errands and coworkers to training and validation (errandSlice).
// --repetitive adds that many long chats, both classes, whose small talk repeats a few lines (repetitiveSlice).
// --friends adds that many chats of teen friends' apps, videos, calls and plans (friendSlice).
// --strangers and --courtship add that many first contacts between strangers and windows of relationships
// under way, both classes (contact.ts strangerSlice, courtshipSlice).
// --rides adds that many benign chats of an adult's pickups and rides with a child (contact.ts rideSlice).
// --asl adds that many benign first contacts with a young age stated: teen peers, an adult who leaves (contact.ts aslSlice).
// --daily adds that many long benign chats of two teen friends over days, half of them narrow (generate.ts dailySlice).
// --peers adds that many long benign chats between stated peers with a courtship's everyday words, half narrow (contact.ts peerSlice).
// --contacts adds that many benign first contacts between stated peers that go on for a pursuit's length (contact.ts peerContactSlice).
// --phrasings gives the train split more wording for the relationship banks (phrases-training.ts).
// --written-wording gives it long, many-register lines for them, written blind (phrases-written.ts);
// --written-banks names the banks that take them (all by default).
// --written-windows adds that many copies of each whole window written blind to the train split (written-windows.ts),
// --written-windows-flat that many more of each as flat text; --written-window-batches reads that many batches of them (1 by default).
// --written-contacts and --written-contacts-flat do the same with the first contacts written blind (written-contacts.ts).
// --lives has each side of the train split's relationship windows say a line of their own life about twice as often (contact.ts livesShare).
// --side-ages keeps every generated record's true ages of both sides (side_ages) for training's side-age loss; the text is unchanged.
// --texting adds real texting and IRC chats (texting.ts: the SMS Spam Collection's personal texts, #ubuntu
// reply threads between two people, split by day) as hosts only: as standalone benign records their
// shape alone told the classes apart (docs/training.md, the structure baseline), so each appears in both
// classes, hosting a harmful guest or a benign one.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { DATA_SWITCHES, allSwitches, dailySlice, errandSlice, friendSlice, generate, repetitiveSlice, type DataSwitch, type DataSwitches } from './generate.ts';
import { aslSlice, courtshipSlice, peerContactSlice, peerSlice, rideSlice, strangerSlice } from './contact.ts';
import { THIN_SHARE, hostedChats } from './hosted.ts';
import { writtenWording } from './phrases-written.ts';
import { writtenContactRecords } from './written-contacts.ts';
import { checkWindowBatches, writtenWindowRecords } from './written-windows.ts';
import { loadIrcChats, loadSmsChats } from './texting.ts';
import { shippedRecipe } from '../train/recipe.ts';
import { importJsonl, importPan12 } from './importers.ts';
import { loadCasino, loadPersonaChat, loadSelfDialogue, loadTopicalChat, registerShiftReal, renderReal, DEFAULT_DATA_DIR } from './real.ts';
import { toJsonl, type LabeledConversation } from './record.ts';
import { parseTurns } from '../../src/scoring/conversation.ts';

/** Every data switch of the generator, plus the new real sets (CaSiNo, Self-dialogue) and hosted exchanges (hosted.ts). */
export interface CorpusSwitches extends DataSwitches {
  newRealSets: boolean;
  hosted: boolean;
}
export type CorpusSwitch = DataSwitch | 'newRealSets' | 'hosted';
export const CORPUS_SWITCHES: readonly CorpusSwitch[] = [...DATA_SWITCHES, 'newRealSets', 'hosted'];

/** Switches from a `--without a,b` list; unknown names are an error. */
export function switchesWithout(without: readonly string[]): CorpusSwitches {
  const sw: CorpusSwitches = { ...allSwitches(true), newRealSets: true, hosted: true };
  for (const name of without) {
    if (name === '') continue;
    if (!(CORPUS_SWITCHES as readonly string[]).includes(name)) throw new Error(`--without: unknown switch ${name} (known: ${CORPUS_SWITCHES.join(', ')})`);
    sw[name as CorpusSwitch] = false;
  }
  return sw;
}

/** Real benign test chats rendered with the register-shift transforms only. */
export const REAL_SHIFT_COUNT = 150;

export interface CorpusOptions {
  seed: number;
  n: number;
  real: boolean;
  synthetic: boolean;
  dataDir: string;
  jsonl: string[];
  pan12?: { xml: string; predators: string } | undefined;
  /** Keep at most this many real chats (smoke runs). */
  realLimit?: number | undefined;
  /** Data changes to keep (default: all on). */
  switches?: Partial<CorpusSwitches> | undefined;
  /** Share of hosted guests that are thin (default THIN_SHARE). */
  thinShare?: number | undefined;
  /** Records of adults' errands and coworkers added to training and validation (errandSlice; default 0). */
  errands?: number | undefined;
  /** Long chats of both classes whose small talk repeats a few lines, in training and validation (repetitiveSlice; default 0). */
  repetitive?: number | undefined;
  /** Benign chats of teen friends' apps, videos, calls and plans, in training and validation (friendSlice; default 0). */
  friends?: number | undefined;
  /** First contacts between strangers, both classes, in training and validation (strangerSlice; default 0). */
  strangers?: number | undefined;
  /** Windows of relationships under way, both classes, in training and validation (courtshipSlice; default 0). */
  courtship?: number | undefined;
  /** Benign chats of an adult's pickups and rides with a child, in training and validation (rideSlice; default 0). */
  rides?: number | undefined;
  /** Benign first contacts with a young age stated (teen peers, an adult who leaves), in training and validation (aslSlice; default 0). */
  asl?: number | undefined;
  /** Long benign chats of two teen friends over days, half of them narrow, in training and validation (dailySlice; default 0). */
  daily?: number | undefined;
  /** Long benign chats between stated peers with a courtship's everyday words, half narrow, in training and validation (contact.ts peerSlice; default 0). */
  peers?: number | undefined;
  /** Benign first contacts between stated peers that go on for a pursuit's length, in training and validation (contact.ts peerContactSlice; default 0). */
  contacts?: number | undefined;
  /** Real texting and IRC chats as hosts of both classes, in all three splits (texting.ts; default off). */
  texting?: boolean | undefined;
  /** More wording for the relationship banks, drawn by the train split only (phrases-training.ts; default off). */
  phrasings?: boolean | undefined;
  /** Long, many-register wording for the relationship banks, train split only (phrases-written.ts; default off). */
  writtenWording?: boolean | undefined;
  /** The banks that take the written lines, by name (phrases-written.ts WRITTEN_BANKS; default all of them). */
  writtenBanks?: readonly string[] | undefined;
  /** Copies of each relationship window written blind, in the train split (written-windows.ts; default 0). */
  writtenWindows?: number | undefined;
  /** Copies of each of those windows as flat text, each window's after its copies with speakers (written-windows.ts; default 0). */
  writtenWindowsFlat?: number | undefined;
  /** How many batches of those windows, the first ones, the copies are made of (written-windows.ts WRITTEN_WINDOW_BATCHES; default 1). */
  writtenWindowBatches?: number | undefined;
  /** Copies of each first contact written blind, in the train split, after the windows (written-contacts.ts; default 0). */
  writtenContacts?: number | undefined;
  /** Copies of each of those first contacts as flat text (written-contacts.ts; default 0). */
  writtenContactsFlat?: number | undefined;
  /** Each side's own life said more often in relationship windows, train split only (contact.ts livesShare; default off). */
  lives?: boolean | undefined;
  /** Every generated record keeps both sides' true ages (`side_ages`), for training's side-age loss (default off). */
  sideAges?: boolean | undefined;
}

/**
 * The training slices by option, in the order buildCorpus appends them (the order fixes the corpus's
 * bytes): each adds that many records to training and validation on its own random stream. train.sh's
 * SLICES lists the same names, in the same order, as recipe settings.
 */
const TRAINING_SLICES = { errands: errandSlice, repetitive: repetitiveSlice, friends: friendSlice, strangers: strangerSlice, courtship: courtshipSlice, rides: rideSlice, asl: aslSlice, daily: dailySlice, peers: peerSlice, contacts: peerContactSlice } as const;
type TrainingSlice = keyof typeof TRAINING_SLICES;
export const SLICE_NAMES = Object.keys(TRAINING_SLICES) as TrainingSlice[];

/** A slice's count as the shipped recipe sets it (its setting is its name in upper case, as train.sh's SLICES). */
function shippedCount(recipe: ReadonlyMap<string, string>, name: string): number {
  const value = Number(recipe.get(name.toUpperCase()));
  if (!Number.isInteger(value) || value < 0) throw new Error(`the shipped recipe sets no count for ${name.toUpperCase()}`);
  return value;
}

/**
 * The training slices of the shipped model's corpus, read from its recipe file, so that `npm run eval`
 * on a fresh machine rebuilds the corpus the shipped model was trained and calibrated on, not only its
 * test split, and a release edits no copy of them here.
 */
export const SHIPPED_SLICES: Readonly<Record<TrainingSlice, number> & { texting: boolean; phrasings: boolean; writtenWindows: number; writtenWindowsFlat: number; writtenWindowBatches: number; writtenContacts: number; writtenContactsFlat: number }> = (() => {
  const recipe = new Map(shippedRecipe().settings);
  return {
    ...(Object.fromEntries(SLICE_NAMES.map((name) => [name, shippedCount(recipe, name)])) as Record<TrainingSlice, number>),
    texting: recipe.get('TEXTING') === '1',
    phrasings: recipe.get('PHRASINGS') === '1',
    writtenWindows: shippedCount(recipe, 'written_windows'),
    writtenWindowsFlat: shippedCount(recipe, 'written_windows_flat'),
    writtenWindowBatches: shippedCount(recipe, 'written_window_batches'),
    writtenContacts: shippedCount(recipe, 'written_contacts'),
    writtenContactsFlat: shippedCount(recipe, 'written_contacts_flat'),
  };
})();
/** The seed and generated count `train.sh` gives the shipped model's corpus by default (kept in step by a test). */
export const SHIPPED_CORPUS = { seed: 7, n: 16000 } as const;

/** About `limit` of `records`, taken at an even stride (smoke runs keep every kind of chat, fewer of each). */
function evenly<T>(records: readonly T[], limit: number): T[] {
  const stride = Math.ceil(records.length / limit);
  return records.filter((_, i) => i % stride === 0);
}

export function buildCorpus(o: CorpusOptions): LabeledConversation[] {
  const sw: CorpusSwitches = { ...switchesWithout([]), ...o.switches, trainingPhrasings: o.phrasings === true, writtenWording: o.writtenWording === true ? writtenWording(o.writtenBanks) : undefined, livesSaid: o.lives === true, sideAges: o.sideAges === true };
  const out: LabeledConversation[] = [];
  if (o.synthetic) out.push(...generate({ ...sw, seed: o.seed, n: o.n }));
  if (o.real) {
    let real = [...loadTopicalChat(o.dataDir), ...loadPersonaChat(o.dataDir)];
    if (sw.newRealSets) real.push(...loadCasino(o.dataDir), ...loadSelfDialogue(o.dataDir));
    if (o.realLimit !== undefined) real = evenly(real, o.realLimit);
    out.push(...renderReal(real, sw));
    if (sw.hosted && o.synthetic) out.push(...hostedChats(real, sw, o.thinShare));
    if (o.texting) {
      let texting = [...loadSmsChats(o.dataDir), ...loadIrcChats(o.dataDir)];
      if (o.realLimit !== undefined) texting = evenly(texting, Math.ceil(o.realLimit / 4));
      if (sw.hosted && o.synthetic) out.push(...hostedChats(texting, sw, o.thinShare));
    }
    if (sw.registerShift) out.push(...registerShiftReal(real, o.realLimit === undefined ? REAL_SHIFT_COUNT : Math.min(REAL_SHIFT_COUNT, Math.ceil(o.realLimit / 20))));
  }
  for (const name of o.synthetic ? SLICE_NAMES : []) {
    const count = o[name] ?? 0;
    if (count > 0) out.push(...TRAINING_SLICES[name](o.seed, count, sw));
  }
  o.jsonl.forEach((path, i) => out.push(...importJsonl(readFileSync(path, 'utf8'), `jsonl${i}`)));
  if (o.pan12) out.push(...importPan12(readFileSync(o.pan12.xml, 'utf8'), readFileSync(o.pan12.predators, 'utf8')).records);
  // Last, so a corpus built with them holds every other record unchanged and in place.
  const flatWindows = o.writtenWindowsFlat ?? 0;
  const windowBatches = o.writtenWindowBatches ?? 1;
  // Checked even when no copies are asked for, so a mistyped count is refused rather than ignored.
  checkWindowBatches(windowBatches);
  if ((o.writtenWindows ?? 0) !== 0 || flatWindows !== 0) out.push(...writtenWindowRecords(o.writtenWindows ?? 0, flatWindows, windowBatches));
  const flatContacts = o.writtenContactsFlat ?? 0;
  if ((o.writtenContacts ?? 0) !== 0 || flatContacts !== 0) out.push(...writtenContactRecords(o.writtenContacts ?? 0, flatContacts));
  return out;
}

/**
 * The shipped model's test split as `train.sh` builds its corpus, which `npm run eval` measures when no
 * corpus file is given. The training slices never reach the test split, so they are not built.
 */
export function shippedTestSplit(dataDir = DEFAULT_DATA_DIR): LabeledConversation[] {
  return testSplitOf({ ...SHIPPED_CORPUS, ...SHIPPED_SLICES, real: true, synthetic: true, dataDir, jsonl: [] });
}

/**
 * The test split of the corpus `o` describes, built without its training slices, which never reach
 * it. The texting chats host both classes in every split, so they are built when `o` has them.
 */
export function testSplitOf(o: CorpusOptions): LabeledConversation[] {
  const none = Object.fromEntries(SLICE_NAMES.map((name) => [name, 0]));
  return buildCorpus({ ...o, ...none }).filter((r) => r.split === 'test');
}

export function summarize(records: LabeledConversation[]): Record<string, Record<string, number>> {
  const summary: Record<string, Record<string, number>> = {};
  for (const r of records) {
    const turns = parseTurns(r.conversation).length;
    for (const key of [r.source, 'all']) {
      const s = (summary[key] ??= { conversations: 0, harmful: 0, turns: 0, harmful_turns: 0, train: 0, val: 0, test: 0 });
      s.conversations = (s.conversations ?? 0) + 1;
      s.harmful = (s.harmful ?? 0) + r.label;
      s.turns = (s.turns ?? 0) + turns;
      s.harmful_turns = (s.harmful_turns ?? 0) + r.label * turns;
      s[r.split] = (s[r.split] ?? 0) + 1;
      s[`${r.split}_turns`] = (s[`${r.split}_turns`] ?? 0) + turns;
      for (const t of r.tags ?? []) s[`tag:${t}`] = (s[`tag:${t}`] ?? 0) + 1;
    }
  }
  return summary;
}

if (import.meta.main) {
  // Each training slice's count, --errands 1500 and so on (0: none).
  const sliceOptions = Object.fromEntries(SLICE_NAMES.map((name) => [name, { type: 'string', default: '0' }])) as Record<TrainingSlice, { type: 'string'; default: string }>;
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      seed: { type: 'string', default: String(SHIPPED_CORPUS.seed) },
      n: { type: 'string', default: String(SHIPPED_CORPUS.n) },
      data: { type: 'string', multiple: true, default: [] },
      pan12: { type: 'string' },
      'pan12-predators': { type: 'string' },
      'no-real': { type: 'boolean', default: false },
      'no-synthetic': { type: 'boolean', default: false },
      'data-dir': { type: 'string', default: DEFAULT_DATA_DIR },
      'real-limit': { type: 'string' },
      without: { type: 'string', default: '' },
      'thin-share': { type: 'string', default: String(THIN_SHARE) },
      ...sliceOptions,
      texting: { type: 'boolean', default: false },
      phrasings: { type: 'boolean', default: false },
      'written-wording': { type: 'boolean', default: false },
      'written-banks': { type: 'string' },
      'written-windows': { type: 'string', default: '0' },
      'written-windows-flat': { type: 'string', default: '0' },
      'written-window-batches': { type: 'string', default: '1' },
      'written-contacts': { type: 'string', default: '0' },
      'written-contacts-flat': { type: 'string', default: '0' },
      lives: { type: 'boolean', default: false },
      'side-ages': { type: 'boolean', default: false },
    },
  });
  const thinShare = Number(values['thin-share']);
  for (const option of SLICE_NAMES) {
    const count = Number(values[option]);
    if (!(Number.isInteger(count) && count >= 0)) throw new Error(`--${option}: a count of records, not ${values[option]}`);
  }
  if (!(thinShare >= 0 && thinShare <= 1)) throw new Error(`--thin-share: a share from 0 to 1, not ${values['thin-share']}`);
  if (!values.out) throw new Error('--out is required');
  if (values['written-banks'] !== undefined && !values['written-wording']) throw new Error('--written-banks needs --written-wording');
  if (values.pan12 && !values['pan12-predators']) throw new Error('--pan12 needs --pan12-predators');
  const records = buildCorpus({
    seed: Number(values.seed),
    n: Number(values.n),
    real: !values['no-real'],
    synthetic: !values['no-synthetic'],
    dataDir: values['data-dir'],
    jsonl: values.data,
    pan12: values.pan12 ? { xml: values.pan12, predators: values['pan12-predators'] as string } : undefined,
    realLimit: values['real-limit'] ? Number(values['real-limit']) : undefined,
    switches: switchesWithout(values.without.split(',').map((x) => x.trim())),
    thinShare,
    ...Object.fromEntries(SLICE_NAMES.map((name) => [name, Number(values[name])])),
    texting: values.texting,
    phrasings: values.phrasings,
    writtenWording: values['written-wording'],
    writtenBanks: values['written-banks']?.split(',').map((b) => b.trim()),
    writtenWindows: Number(values['written-windows']),
    writtenWindowsFlat: Number(values['written-windows-flat']),
    writtenWindowBatches: Number(values['written-window-batches']),
    writtenContacts: Number(values['written-contacts']),
    writtenContactsFlat: Number(values['written-contacts-flat']),
    lives: values.lives,
    sideAges: values['side-ages'],
  });
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, toJsonl(records));
  writeFileSync(values.out.replace(/\.jsonl$/, '') + '.summary.json', JSON.stringify(summarize(records), null, 2));
  console.error(`corpus: ${records.length} conversations -> ${values.out}`);
}
