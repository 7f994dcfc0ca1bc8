// Generated exchanges hosted inside real benign chats, in both classes: a predator's moves, or a benign
// family's (a parent, a coach, adults flirting, teens with secrets), spliced into a real Topical-Chat,
// Persona-Chat, CaSiNo or Self-dialogue chat, as one block or spread in small groups among its turns.
//
// Why: every real chat is benign, and real chats are written with longer words, longer turns and
// tidier punctuation than generated ones. Without hosts, "reads like the real sets" is itself a benign
// cue: the structure-only baseline found it (ROC-AUC 0.68, mostly real benign against generated
// harmful), and a predator who writes long, articulate turns about everyday things would look benign.
// Hosting both classes in the same real chats leaves only what the guest says to tell them apart.
//
// A share of the guests can be thin (`--thin-share`; none in the shipped recipe, see THIN_SHARE): a
// few of one side's lines scattered one at a time through the host chat, with no reply on topic. Whole
// exchanges put ten or more predatory lines among a host's turns, while grooming inside everyday talk
// can be three lines in a hundred messages, the density the sparse-grooming eval slice measures
// (scripts/eval/sparse-grooming.ts). Benign guests are thinned alike, to their family's own lines (a
// friend's secret, a parent's rule, a flirt), so neither a few lines off the host's topic nor a lone
// line about secrets, pictures or meeting is a cue by itself.

import { LONG_TURNS, SHORT_TURNS, ageFields, drawExchange, finishRendering, setOnset, type DataSwitches, type Move } from './generate.ts';
import { turnsOf } from './recut.ts';
import { drawRegister, firstHarmfulLine, joinLines, registerLines, type Item, type Side } from './register.ts';
import { REAL_REGISTER_SHARE } from './real.ts';
import { createRng, hash32, type Rng } from './rng.ts';
import type { LabeledConversation } from './record.ts';

/** Items in the order the host and guest speak: the guest's block at one point, or in groups of 1-4 spread through. */
export function splice(host: readonly Item[], guest: readonly Item[], rng: Rng): Item[] {
  if (rng.chance(0.5)) {
    const at = rng.int(0, host.length);
    return [...host.slice(0, at), ...guest, ...host.slice(at)];
  }
  const groups: Item[][] = [];
  for (let i = 0; i < guest.length; ) {
    const n = rng.int(1, 4);
    groups.push(guest.slice(i, i + n));
    i += n;
  }
  return placeGroups(host, groups, rng);
}

/** Items with each guest item put alone at its own place among the host's, in the guest's order. */
export function scatter(host: readonly Item[], guest: readonly Item[], rng: Rng): Item[] {
  return placeGroups(host, guest.map((g) => [g]), rng);
}

/** The groups, in order, each at a random place between the host's items. */
function placeGroups(host: readonly Item[], groups: readonly Item[][], rng: Rng): Item[] {
  const at = groups.map(() => rng.int(0, host.length)).sort((a, b) => a - b);
  const out: Item[] = [];
  let g = 0;
  for (let i = 0; i <= host.length; i++) {
    while (g < groups.length && at[g] === i) out.push(...(groups[g++] as Item[]));
    if (i < host.length) out.push(host[i] as Item);
  }
  return out;
}

/**
 * Share of hosted records, in each class, whose guest is thin, unless `--thin-share` says otherwise.
 * 0 in the shipped recipe: runs 20, 22 (0.3) and 23 (0.15) rank sparse grooming better but flag more
 * flattened hard negatives at 0.5 (docs/training.md, "Tried and not kept").
 */
export const THIN_SHARE = 0;
/** Lines a thin guest keeps: role A's predatory lines when harmful; its own lines, then small talk, when benign. */
export const THIN_LINES = { min: 3, max: 6 } as const;

/**
 * A thin guest: THIN_LINES of role A's lines, in order. Harmful: its predatory lines only. Benign: its
 * family's own lines first (a parent's rule, a friend's secret, a flirt), since those are what a thin
 * predatory guest must be told apart from, then its small talk when it has too few of them.
 */
export function thinGuest(moves: readonly Move[], harmful: boolean, rng: Rng): Move[] {
  const sideA = moves.map((m, i) => ({ m, i })).filter(({ m }) => m.role === 'A' && m.text.trim() !== '');
  const own = rng.shuffle(sideA.filter(({ m }) => (harmful ? m.harmful : !m.smallTalk)));
  const rest = harmful ? [] : rng.shuffle(sideA.filter(({ m }) => m.smallTalk));
  const keep = [...own, ...rest].slice(0, rng.int(THIN_LINES.min, THIN_LINES.max));
  return keep.sort((a, b) => a.i - b.i).map(({ m }) => m);
}

/**
 * Two hosted records per real chat, in its split: one with a harmful guest (the chat as written is its
 * benign twin) and one with a benign guest, so that a splice is no cue either. Each is seeded by the
 * real chat's id, so the result does not depend on order.
 */
export function hostedChats(real: readonly LabeledConversation[], sw: DataSwitches, thinShare = THIN_SHARE): LabeledConversation[] {
  return real.flatMap((r) => [hosted(r, true, sw, thinShare), hosted(r, false, sw, thinShare)]);
}

/**
 * The guest's role A (the predator, when harmful) takes a random side of the host chat. Rendered as
 * real chats are: chat register for REAL_REGISTER_SHARE of them, tidy prose for the rest (so the
 * guest's lines are no cue by their style), then flat text and re-cuts.
 */
function hosted(r: LabeledConversation, harmful: boolean, sw: DataSwitches, thinShare: number): LabeledConversation {
  const kind = harmful ? 'harmful' : 'benign';
  const rng = createRng(hash32(`hosted-${kind}:${r.id}`));
  // Its own stream, so that the records left whole are the same with thin guests on or off.
  const thinRng = createRng(hash32(`hosted-thin-${kind}:${r.id}`));
  const thin = thinRng.chance(thinShare);
  const guest = drawExchange(rng, r.split, harmful, sw);
  const sideA: Side = rng.chance(0.5) ? 0 : 1;
  const sideB: Side = sideA === 0 ? 1 : 0;
  const host: Item[] = turnsOf(r.conversation).map((t) => ({ side: t.speaker === 'user2' ? 1 : 0, text: t.text }));
  const toItem = (m: Move): Item => ({ side: m.role === 'A' ? sideA : sideB, text: m.text, harmful: m.harmful });
  const items = thin ? scatter(host, thinGuest(guest.moves, harmful, thinRng).map(toItem), thinRng) : splice(host, guest.moves.map(toItem), rng);
  const tags = thin ? ['hosted', 'thin'] : ['hosted'];
  const tidyShare = sw.register && rng.chance(REAL_REGISTER_SHARE) ? 0 : 1;
  const r0 = drawRegister(rng, tidyShare);
  const r1 = drawRegister(rng, tidyShare, r0);
  if (tidyShare === 0) tags.push('chat-register');
  const lines = registerLines(items, [r0, r1], rng);
  const finished = finishRendering(joinLines(lines, ['user1', 'user2']), false, sw, rng);
  tags.push(...finished.tags);
  if (items.length <= SHORT_TURNS) tags.push('short');
  if (items.length >= LONG_TURNS) tags.push('long');
  // A thin guest keeps none of the minor's replies, so none in kind either.
  if (harmful && !thin && guest.inKind) tags.push('in-kind');
  const record: LabeledConversation = {
    id: `${r.id}-hosted-${harmful ? 'h' : 'b'}`,
    conversation: finished.text,
    label: harmful ? 1 : 0,
    predator: harmful ? (sideA === 0 ? 'user1' : 'user2') : 'neither',
    family: `hosted_${guest.family}`,
    split: r.split,
    source: `${r.source}+generator`,
    tags,
  };
  setOnset(record, firstHarmfulLine(lines), finished.tags);
  const [ageUser1, ageUser2] = sideA === 0 ? [guest.ageA, guest.ageB] : [guest.ageB, guest.ageA];
  ageFields(record, ageUser1, ageUser2, rng, sw.sideAges === true);
  return record;
}
