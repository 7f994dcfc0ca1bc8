// The bench's deterministic benign conversations: 40-turn chats of about 2,500 characters, a batch of
// 100 of them, and two of 500,000 characters (with speakers, and flat).

const LINES = [
  'hey how was your weekend',
  'pretty good, we went hiking up by the lake',
  'nice! was it crowded',
  'not too bad, we left early so we beat the traffic',
  'did you finish the report for monday',
  'almost, i still need to check the numbers in the last table',
  'want me to look over it tomorrow morning',
  'that would be great, thanks a lot',
  'are you watching the match tonight',
  'yes, my brother is coming over with pizza',
  'which team do you think will win',
  'honestly no idea, both have been playing well lately',
  'i tried that new recipe for lentil soup',
  'how did it turn out',
  'a bit too salty but otherwise really good',
  'my cat knocked a plant off the shelf again',
  'haha classic, is the plant ok',
  'mostly, lost a few leaves though',
  'the train was twenty minutes late this morning',
  'ugh, again? that line is always delayed',
  // Not every chat is ASCII: these take the fast tokenizer's learned per-character rules, not its ASCII rules.
  'the café near José’s place does great crêpes 😋',
  'naïve question but is the übung due friday?',
  'lol 😂😂 that meme is everywhere',
  'we watched “Amélie” again, still love it ❤️',
];

/** How many different 40-turn conversations the throughput runs cycle through (not one, cached). */
export const DISTINCT = 64;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * The first `length` UTF-16 units of `text`, never ending in half an emoji (a space takes the half's
 * place): chat clients send whole characters.
 */
function cut(text: string, length: number): string {
  const head = text.slice(0, length);
  const last = head.charCodeAt(head.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? `${head.slice(0, -1)} ` : head;
}

/** A benign two-party chat with `turns` turns, padded to about `chars` characters. */
export function conversation(turns: number, chars: number, seed: number): string {
  const next = rng(seed);
  const perTurn = Math.floor(chars / turns) - 7;
  const out: string[] = [];
  for (let i = 0; i < turns; i++) {
    let text = '';
    while (text.length < perTurn) text += `${LINES[Math.floor(next() * LINES.length)]} `;
    out.push(`user${(i % 2) + 1}: ${cut(text, perTurn).trimEnd()}`);
  }
  return out.join('\n');
}

export interface BenchConversations {
  /** DISTINCT 40-turn chats, which the single-conversation runs cycle through. */
  singles: string[];
  /** 100 other 40-turn chats: one batch. */
  batch: string[];
  /** 500,000 characters with speakers. */
  huge: string;
  /** The same length as flat text (no speaker prefix, one line). */
  hugeFlat: string;
}

export function benchConversations(): BenchConversations {
  const singles = Array.from({ length: DISTINCT }, (_, i) => conversation(40, 2500, i + 1));
  const batch = Array.from({ length: 100 }, (_, i) => conversation(40, 2500, i + 100));
  const huge = cut(conversation(8000, 500_000, 7), 500_000);
  // The same length as flat text (no speaker prefix, one line): cut into 8-token pieces, the most
  // segments a 500,000-character chat of ordinary words makes.
  const hugeFlat = cut(conversation(9000, 600_000, 7).replace(/^user[12]: /gm, '').replace(/\n/g, ' '), 500_000);
  for (const [name, text] of [['huge', huge], ['huge flat', hugeFlat]] as const) {
    if (text.length !== 500_000) throw new Error(`${name} conversation has ${text.length} characters, not 500,000`);
  }
  return { singles, batch, huge, hugeFlat };
}
