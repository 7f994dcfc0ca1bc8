// Proxies of our own for the two kinds of real chat on which 3.5.0 failed the real-chat evaluation
// (issue 32), which the project does not hold and must not seek:
//   1. false alarms on first contact between strangers on anonymous chat sites (the age/sex/location
//      ritual, handles, flirting, adults' sexual talk): a quarter of real non-grooming excerpts with no
//      sexual word flagged, 39 % of those where a teenage age is stated;
//   2. misses of a grooming relationship already under way (affection and everyday care, no named
//      move in the window).
// The chats are contact.ts's families in the test split, with its held-out phrasings and four
// families no training slice holds; flat excerpts under 1,000 characters of them (real grooming
// excerpts that short ranked backwards); and the real SMS and IRC chats of the test split (IRC by
// held-out day), which must not be flagged. Their targets are the real evaluation's (CONTACT_TARGETS),
// which no release meets yet; npm test holds the shipped model to CONTACT_FLOORS, so that a release
// cannot slip back towards 3.5.0 on the two failure kinds unnoticed.

import { CONTACT_TEST_FAMILIES, SHORT_EXCERPT_CHARS, contactShortExcerpts, contactTestSlice, peerSexualChats, rideTestChats } from '../data/contact.ts';
import { allSwitches } from '../data/generate.ts';
import { DEFAULT_DATA_DIR } from '../data/real.ts';
import type { LabeledConversation } from '../data/record.ts';
import { flatten } from '../data/recut.ts';
import { loadIrcChats, loadSmsChats } from '../data/texting.ts';
import { toRequest } from '../data/export.ts';
import { scoreInBatches, type BatchScorer } from './harness.ts';
import { CONTACT_TARGETS, proxyMetrics, proxyRow, proxyTable, type ProxyRow } from './proxy-rows.ts';

export const CONTACT_SEED = 32032;
/** Chats drawn for the whole-chat proxy, and for the short-excerpt proxy (about half are kept, being under 1,000 characters). */
export const CONTACT_CHATS = 1500;
export const CONTACT_SHORT_DRAWN = 2000;
/** Chats of two stated teenagers' sexual talk, for the policy's Medium Risk band. */
export const PEER_SEXUAL_CHATS = 200;
/** Chats of an adult's pickups and rides with a child (benign), worded as a courtship's plans are. */
export const RIDE_CHATS = 300;
/** The Medium Risk band (the spec's risk bands), where the policy places two stated minors' sexual talk. */
export const MEDIUM_BAND = { min: 0.4, max: 0.6 } as const;

/** The real-chat evaluation's targets (issue 32) that these proxies stand in for (proxy-rows.ts). */
export { CONTACT_TARGETS } from './proxy-rows.ts';

/**
 * What `test/model/model-guards.test.ts` holds the shipped model to: between 3.5.0's figures, before
 * these kinds were in training, and the releases' since (in brackets: 3.5.0, 3.6.0, 3.7.0, 3.8.0, 3.9.0, 3.10.0, 3.11.0, 3.12.0, 3.13.0, 3.14.0, 3.15.0, 3.16.0, 3.17.0), with room
 * for a retrained seed; the relationship floor sits between 3.6.0 and 3.7.0, so a release cannot fall
 * back to 3.6.0's reading of them. Floors, not the targets above.
 */
export const CONTACT_FLOORS = {
  /** first contact between strangers (0.864, 0.964, 0.964, 0.967, 0.971, 0.964, 0.971, 0.980, 0.982, 0.982, 0.983, 0.982, 0.987) */
  strangers_roc_auc_min: 0.93,
  /** strangers' benign chats flagged at 0.5 (0.273, 0.104, 0.086, 0.062, 0.037, 0.029, 0.043, 0.033, 0.023, 0.029, 0.023, 0.033, 0.025): at most 3.6.0's */
  strangers_benign_flagged_max: 0.1,
  /** a relationship under way (0.591, 0.756, 0.806, 0.833, 0.810, 0.852, 0.858, 0.879, 0.883, 0.890, 0.894, 0.886, 0.907); 3.6.0's candidates, runs 42 to 47, read 0.731 to 0.767 */
  relationships_roc_auc_min: 0.77,
  /** flat excerpts under 1,000 characters (0.629, 0.826, 0.839, 0.844, 0.856, 0.861, 0.868, 0.881, 0.877, 0.874, 0.871, 0.877, 0.885): the real evaluation's own target */
  short_excerpt_roc_auc_min: 0.75,
  /** real IRC chats of held-out days flagged as written (0.027, 0.012, 0.009, 0.006, 0.006, 0.006, 0.006, 0.009, 0.012, 0.003, 0.006, 0.006, 0.003): the real evaluation's own target */
  real_irc_flagged_max: 0.02,
  /** two stated teenagers' sexual talk in High Risk or Critical, where the policy wants Medium Risk (0.39, 0.15, 0.08, 0.055, 0.08, 0.045, 0.05, 0.05, 0.065, 0.06, 0.065, 0.06, 0.03) */
  peers_high_or_critical_max: 0.25,
} as const;

/**
 * Words a reviewer reads as sexual talk. The real evaluation's "no sexual word" slice is the false
 * alarm that matters most: strangers' small talk with nothing sexual in it.
 */
const SEXUAL_WORD = /\b(sex\w*|horny|naked|nudes?|dirty|naughty|kiss\w*|fantasy|roleplay|turns? (?:u|you|me) on|wearing|bed|body|hot|rough|shower|drinks|bold|fun tonight|alone|wine|hotel|airbnb|blush)\b/i;
/** A stated teenage age: a number from 13 to 17 standing alone (`15 f uk`, `im 14`). */
const TEEN_AGE = /(?:^|[\s/,.(])(1[3-7])(?=$|[\s/,.)!?]|\s?[mfMF]\b)/;

export interface ContactRecords {
  contact: LabeledConversation[];
  short: LabeledConversation[];
  sms: LabeledConversation[];
  irc: LabeledConversation[];
  /** Two stated teenagers' sexual talk (policy: Medium Risk). */
  peers: LabeledConversation[];
  /** An adult's pickups and rides with a child: benign, and worded as a courtship's plans are. */
  rides: LabeledConversation[];
}

/** Every record the proxies score, also written out for the n-gram probe (scripts/eval/export-proxies.ts). */
export function contactProxyRecords(dataDir = DEFAULT_DATA_DIR): ContactRecords {
  const sw = allSwitches(true);
  return {
    contact: contactTestSlice(CONTACT_SEED, CONTACT_CHATS, sw),
    short: contactShortExcerpts(CONTACT_SEED, CONTACT_SHORT_DRAWN, sw),
    sms: loadSmsChats(dataDir).filter((r) => r.split === 'test'),
    irc: loadIrcChats(dataDir).filter((r) => r.split === 'test'),
    peers: peerSexualChats(CONTACT_SEED, PEER_SEXUAL_CHATS, sw),
    rides: rideTestChats(CONTACT_SEED, RIDE_CHATS, sw),
  };
}

const pick = <T>(xs: readonly T[], keep: readonly boolean[]): T[] => xs.filter((_, i) => keep[i]);

export async function evaluateContactProxies(scorer: BatchScorer, records: ContactRecords = contactProxyRecords()): Promise<ProxyRow[]> {
  const score = async (rs: readonly LabeledConversation[], flat = false): Promise<number[]> =>
    (await scoreInBatches(scorer, rs.map((r) => (flat ? { ...toRequest(r), conversation: flatten(r.conversation) } : toRequest(r))))).map((p) => p.harmful_score);
  const t = CONTACT_TARGETS;
  const rows: ProxyRow[] = [];
  const contact = records.contact;
  const contactScores = await score(contact);
  const kind = (k: string): boolean[] => contact.map((r) => (r.tags ?? []).includes(`contact-${k}`));
  for (const [k, label] of [['stranger', 'first contact between strangers'], ['courtship', 'a relationship under way']] as const) {
    const keep = kind(k);
    rows.push(proxyRow(label, pick(contact, keep), pick(contactScores, keep), `ROC-AUC >= ${t.roc_auc_min}, recall >= ${t.recall_min}, benign flagged <= ${t.fpr_max}`));
  }
  const strangerBenign = contact.map((r, i) => kind('stranger')[i] === true && r.label === 0);
  const teen = strangerBenign.map((b, i) => b && TEEN_AGE.test(contact[i]?.conversation ?? ''));
  rows.push(proxyRow('strangers, benign, a teenage age stated', pick(contact, teen), pick(contactScores, teen), `flagged <= ${t.fpr_max}`));
  const clean = strangerBenign.map((b, i) => b && !SEXUAL_WORD.test(contact[i]?.conversation ?? ''));
  rows.push(proxyRow('strangers, benign, no sexual word', pick(contact, clean), pick(contactScores, clean), `flagged <= ${t.no_sexual_word_flagged_max}`));
  for (const f of CONTACT_TEST_FAMILIES) {
    const keep = contact.map((r) => r.family === f.name || r.family === `${f.name}_excerpt_benign`);
    rows.push(proxyRow(`held-out family ${f.name} (${f.harmful ? 'harmful' : 'benign'})`, pick(contact, keep), pick(contactScores, keep), f.harmful ? `recall >= ${t.recall_min}` : `flagged <= ${t.fpr_max}`));
  }
  rows.push(proxyRow("an adult's pickups and rides with a child (benign)", records.rides, await score(records.rides), `flagged <= ${t.fpr_max}`));
  const short = records.short;
  rows.push(proxyRow(`flat excerpts under ${SHORT_EXCERPT_CHARS.toLocaleString('en')} characters`, short, await score(short), `ROC-AUC >= ${t.short_excerpt_roc_auc_min}`));
  for (const [name, rs] of [['real SMS chats (test split)', records.sms], ['real IRC chats (held-out days)', records.irc]] as const) {
    rows.push(proxyRow(`${name}, as written`, rs, await score(rs), `flagged <= ${t.real_benign_flagged_max}`));
    rows.push(proxyRow(`${name}, flat`, rs, await score(rs, true), `flagged <= ${t.real_benign_flagged_max}`));
  }
  return rows;
}

/** Where two stated teenagers' sexual talk lands: shares below, in and above the Medium Risk band (policy: in it). */
export interface PeerBandRow {
  chats: number;
  below: number;
  medium: number;
  high_or_critical: number;
}

export async function evaluatePeerBand(scorer: BatchScorer, records: ContactRecords = contactProxyRecords()): Promise<PeerBandRow> {
  const scores = (await scoreInBatches(scorer, records.peers.map(toRequest))).map((p) => p.harmful_score);
  const share = (keep: (s: number) => boolean): number => scores.filter(keep).length / Math.max(1, scores.length);
  return {
    chats: scores.length,
    below: share((s) => s < MEDIUM_BAND.min),
    medium: share((s) => s >= MEDIUM_BAND.min && s < MEDIUM_BAND.max),
    high_or_critical: share((s) => s >= MEDIUM_BAND.max),
  };
}

const fmt = (v: number | null): string => (v === null ? 'n/a' : String(Math.round(v * 1000) / 1000));

export function contactMarkdown(rows: readonly ProxyRow[], peers?: PeerBandRow): string {
  return `## Strangers' first contact and relationships under way (issue 32 proxies; npm test holds the shipped model to floors below the targets)
Generated test chats of contact.ts's families (held-out phrasings; four families in no training slice),
flat excerpts of them under ${SHORT_EXCERPT_CHARS.toLocaleString('en')} characters, and real SMS and IRC test chats. They stand in for
the real-chat evaluation's excerpts, which the project does not hold; targets are that evaluation's.
In brackets, 95 % intervals over the slice's chats (ROC-AUC: Hanley and McNeil; shares: Wilson): what the
draw of the chats alone could move, not a seed's spread.
${proxyTable(rows)}
${peers === undefined ? '' : `
Two stated teenagers' sexual talk (${peers.chats} chats; policy: Medium Risk, ${MEDIUM_BAND.min} to ${MEDIUM_BAND.max}, sampled by reviewers, not queued):
below the band ${fmt(peers.below)}, in it ${fmt(peers.medium)}, High Risk or Critical ${fmt(peers.high_or_critical)}.
`}`;
}

/** Metric names for the manifest: `contact_<slice>_<figure>`. */
export function contactMetrics(rows: readonly ProxyRow[], peers?: PeerBandRow): Record<string, number> {
  const out: Record<string, number> = {};
  if (peers !== undefined) {
    out.contact_peers_sexual_medium_band = Math.round(peers.medium * 10_000) / 10_000;
    out.contact_peers_sexual_high_or_critical = Math.round(peers.high_or_critical * 10_000) / 10_000;
  }
  return { ...out, ...proxyMetrics('contact', rows) };
}
