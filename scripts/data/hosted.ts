// Generated exchanges hosted inside real benign chats, in both classes: a predator's moves, or a benign
// family's (a parent, a coach, adults flirting, teens with secrets), spliced into a real Topical-Chat,
// Persona-Chat, CaSiNo or Self-dialogue chat, as one block or spread in small groups among its turns.
//
// Why: every real chat is benign, and real chats are written with longer words, longer turns and
// tidier punctuation than generated ones. Without hosts, "reads like the real sets" is itself a benign
// cue: the structure-only baseline found it (ROC-AUC 0.68, mostly real benign against generated
// harmful), and a predator who writes long, articulate turns about everyday things would look benign.
// Hosting both classes in the same real chats leaves only what the guest says to tell them apart.

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
 * Two hosted records per real chat, in its split: one with a harmful guest (the chat as written is its
 * benign twin) and one with a benign guest, so that a splice is no cue either. Each is seeded by the
 * real chat's id, so the result does not depend on order.
 */
export function hostedChats(real: readonly LabeledConversation[], sw: DataSwitches): LabeledConversation[] {
  return real.flatMap((r) => [hosted(r, true, sw), hosted(r, false, sw)]);
}

/**
 * The guest's role A (the predator, when harmful) takes a random side of the host chat. Rendered as
 * real chats are: chat register for REAL_REGISTER_SHARE of them, tidy prose for the rest (so the
 * guest's lines are no cue by their style), then flat text and re-cuts.
 */
function hosted(r: LabeledConversation, harmful: boolean, sw: DataSwitches): LabeledConversation {
  const rng = createRng(hash32(`hosted-${harmful ? 'harmful' : 'benign'}:${r.id}`));
  const guest = drawExchange(rng, r.split, harmful, sw);
  const sideA: Side = rng.chance(0.5) ? 0 : 1;
  const sideB: Side = sideA === 0 ? 1 : 0;
  const host: Item[] = turnsOf(r.conversation).map((t) => ({ side: t.speaker === 'user2' ? 1 : 0, text: t.text }));
  const items = splice(host, guest.moves.map((m: Move) => ({ side: m.role === 'A' ? sideA : sideB, text: m.text, harmful: m.harmful })), rng);
  const tags = ['hosted'];
  const tidyShare = sw.register && rng.chance(REAL_REGISTER_SHARE) ? 0 : 1;
  const r0 = drawRegister(rng, tidyShare);
  const r1 = drawRegister(rng, tidyShare, r0);
  if (tidyShare === 0) tags.push('chat-register');
  const lines = registerLines(items, [r0, r1], rng);
  const finished = finishRendering(joinLines(lines, ['user1', 'user2']), false, sw, rng);
  tags.push(...finished.tags);
  if (items.length <= SHORT_TURNS) tags.push('short');
  if (items.length >= LONG_TURNS) tags.push('long');
  if (harmful && guest.inKind) tags.push('in-kind');
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
  ageFields(record, ageUser1, ageUser2, rng);
  return record;
}
