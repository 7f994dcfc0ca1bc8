import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_DATA_DIR } from '../../scripts/data/real.ts';
import type { LabeledConversation } from '../../scripts/data/record.ts';
import { IRC_MIN_MESSAGES, SMS_CHUNK, ircThreads, loadIrcChats, loadSmsChats, parseIrcAnnotation, parseIrcRaw, twoPersonRun } from '../../scripts/data/texting.ts';
import { parseTurns } from '../../src/scoring/conversation.ts';

/** The message text of a `name: text` line (names never hold `: `). */
const textOf = (line: string): string => line.slice(line.indexOf(': ') + 2);
const linesOf = (r: LabeledConversation): string[] => r.conversation.split('\n');

/** Every line starts a turn of its own and the chat has exactly two speakers. */
function expectTwoSpeakerLines(r: LabeledConversation): void {
  const lines = linesOf(r);
  for (const line of lines) expect(line).toMatch(/^[^:\n]+: \S/);
  const turns = parseTurns(r.conversation);
  expect(turns).toHaveLength(lines.length);
  expect(new Set(turns.map((t) => t.speaker))).toEqual(new Set(['user1', 'user2']));
  expect(turns[0]?.speaker).toBe('user1');
}

// ---- a small SMS collection ---------------------------------------------------------------------

const HAM = Array.from({ length: 40 }, (_, i) => `ham text number ${i} lol`);
const SMS_LINES = [
  `ham\t${HAM[0]}`,
  'spam\tWINNER!! claim your PRIZE now, txt WIN to 80086',
  ...HAM.slice(1, 20).map((t) => `ham\t${t}`),
  `ham\t${HAM[3]}`, // a repeat: must not appear twice
  'spam\tFree entry PRIZE draw, call 0906 now',
  'ham\tsee u at  &lt;#&gt;  ok &amp; bring cash',
  'ham\tthe site is &lt;URL&gt;',
  'ham\t   ',
  ...HAM.slice(20).map((t) => `ham\t${t}`),
];

function smsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'texting-sms-'));
  mkdirSync(join(dir, 'sms-spam-collection'));
  writeFileSync(join(dir, 'sms-spam-collection', 'SMSSpamCollection'), SMS_LINES.join('\n') + '\n');
  return dir;
}

describe('SMS chats', () => {
  const dir = smsDir();
  const chats = loadSmsChats(dir);
  const texts = chats.flatMap((r) => linesOf(r).map(textOf));

  it('never uses a spam message', () => {
    expect(chats.length).toBeGreaterThan(2);
    expect(texts.some((t) => /PRIZE/.test(t))).toBe(false);
  });

  it('walks the ham messages in file order, each text once, chunk by chunk', () => {
    const hamInOrder = texts.filter((t) => t.startsWith('ham text'));
    expect(hamInOrder).toEqual(HAM.slice(0, hamInOrder.length));
    // Only a final chunk shorter than SMS_CHUNK.min may be left out.
    expect(HAM.length - hamInOrder.length).toBeLessThan(SMS_CHUNK.min);
    for (const r of chats) expect(linesOf(r).length).toBeGreaterThanOrEqual(SMS_CHUNK.min);
    for (const r of chats) expect(linesOf(r).length).toBeLessThanOrEqual(SMS_CHUNK.max);
  });

  it('decodes entities, fills the number placeholder and drops messages it cannot fill', () => {
    const filled = texts.find((t) => t.startsWith('see u at'));
    expect(filled).toMatch(/^see u at \d+ ok & bring cash$/);
    expect(texts.some((t) => /&lt;|&gt;|&amp;|<#>|URL|^\s*$/.test(t))).toBe(false);
  });

  it('writes two speakers in name: text lines, first speaker user1, never three texts in a row from one', () => {
    for (const r of chats) {
      expectTwoSpeakerLines(r);
      const speakers = parseTurns(r.conversation).map((t) => t.speaker);
      for (let i = 2; i < speakers.length; i++) expect(speakers[i] === speakers[i - 1] && speakers[i] === speakers[i - 2]).toBe(false);
    }
  });

  it('labels every chat benign, from the SMS source, with sms-<index> ids and the sms tag', () => {
    chats.forEach((r) => {
      expect(r).toMatchObject({ label: 0, predator: 'neither', source: 'sms-spam-collection', family: 'sms', tags: ['sms'] });
      expect(r.id).toMatch(/^sms-\d+$/);
      expect(['train', 'val', 'test']).toContain(r.split);
    });
    expect(new Set(chats.map((r) => r.id)).size).toBe(chats.length);
  });

  it('is deterministic, and a limit gives the first chats of the full run', () => {
    expect(JSON.stringify(loadSmsChats(smsDir()))).toBe(JSON.stringify(chats));
    expect(loadSmsChats(dir, { limit: 2 })).toEqual(chats.slice(0, 2));
  });
});

// ---- a small IRC day ----------------------------------------------------------------------------

// Three threads interleave: alice/bob (with a bot and a rename), carol/dave/eve (three people) and
// frank/gina (too short); hank talks to himself; a system line is linked to messages of two threads.
const IRC_RAW = [
  '=== alice [~a@host]  has joined #ubuntu', // 0
  '[10:00] <alice> my wifi is down', // 1
  '[10:00] <carol> anyone know gimp?', // 2
  '[10:01] <bob> alice: which card?', // 3
  '=== dave [~d@host]  has quit [Quit: bye]', // 4
  '[10:01] <alice> bob: intel 4965', // 5
  '[10:02] <ubottu> alice: wifi help is at https://help.ubuntu.com/community/WifiDocs', // 6
  '[10:02] <dave> carol: yes', // 7
  '=== bob is now known as bob|away', // 8
  '[10:03] <bob|away> alice: try sudo modprobe iwl4965', // 9
  '[10:03] <carol> dave: how do i crop', // 10
  '[10:04] <eve> carol: use the crop tool', // 11
  '[10:04] <dave> carol: select then crop', // 12
  '[10:05] <frank> hi', // 13
  '[10:05] <gina> frank: hey', // 14
  '[10:06] <hank> hello?', // 15
  '[10:06] <hank> anyone?', // 16
  '[10:06] <hank> guess not', // 17
  '[10:07] <alice> bob: works now thx', // 18
  '[10:07]  * carol waves', // 19
  '[10:08] <frank> ', // 20
].join('\n');

// `A B -`: the earlier line first, as the corpus writes them; a self-link starts a thread.
const IRC_LINKS = [
  [1, 1],
  [1, 3],
  [3, 5],
  [5, 6],
  [5, 9],
  [9, 18],
  [0, 0],
  [4, 4],
  [8, 8],
  [4, 9],
  [4, 12],
  [2, 2],
  [2, 7],
  [7, 10],
  [10, 11],
  [11, 12],
  [13, 13],
  [13, 14],
  [15, 15],
  [15, 16],
  [16, 17],
  [19, 19],
]
  .map(([a, b]) => `${a} ${b} -`)
  .join('\n');

const DAYS = Array.from({ length: 16 }, (_, i) => `2011-03-${String(i + 1).padStart(2, '0')}`);

function ircDir(days: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'texting-irc-'));
  const train = join(dir, 'irc-disentanglement', 'train');
  mkdirSync(train, { recursive: true });
  for (const day of days) {
    writeFileSync(join(train, `${day}.train-c.raw.txt`), IRC_RAW + '\n');
    writeFileSync(join(train, `${day}.train-c.annotation.txt`), IRC_LINKS + '\n');
  }
  return dir;
}

describe('IRC chats', () => {
  const messages = parseIrcRaw(IRC_RAW);
  const links = parseIrcAnnotation(IRC_LINKS);

  it('reads only <nick> messages with text, numbered by their line in the raw file', () => {
    expect(messages.map((m) => m.line)).toEqual([1, 2, 3, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]);
    expect(messages[0]).toMatchObject({ line: 1, nick: 'alice', text: 'my wifi is down' });
  });

  it('keeps a renamed nick the same person', () => {
    expect(messages.find((m) => m.line === 9)).toMatchObject({ nick: 'bob|away', person: 'bob' });
  });

  it('groups messages by the reply links, never through a system line', () => {
    const threads = ircThreads(messages, links).map((t) => t.map((m) => m.line));
    expect(threads).toEqual([[1, 3, 5, 6, 9, 18], [2, 7, 10, 11, 12], [13, 14], [15, 16, 17]]);
  });

  it('keeps a two-person thread whole without its bot, and the longest two-person run of a larger thread', () => {
    const [ab, cde, fg, h] = ircThreads(messages, links);
    expect(twoPersonRun(ab ?? [])?.map((m) => m.line)).toEqual([1, 3, 5, 9, 18]);
    expect(twoPersonRun(cde ?? [])?.map((m) => m.line)).toEqual([2, 7, 10]);
    expect(twoPersonRun(fg ?? [])).toBeUndefined();
    expect(twoPersonRun(h ?? [])).toBeUndefined();
  });

  const days = DAYS.slice(0, 2);
  const chats = loadIrcChats(ircDir(days));

  it('renders each two-person exchange as name: text lines in log order, addressing kept', () => {
    expect(chats.map((r) => linesOf(r).map(textOf))).toEqual(
      days.flatMap(() => [
        ['my wifi is down', 'alice: which card?', 'bob: intel 4965', 'alice: try sudo modprobe iwl4965', 'bob: works now thx'],
        ['anyone know gimp?', 'carol: yes', 'dave: how do i crop'],
      ]),
    );
    for (const r of chats) expectTwoSpeakerLines(r);
    expect(chats.map((r) => r.conversation).join('\n')).not.toMatch(/===|has joined|ubottu|waves|hank|gina/);
  });

  it('labels every chat benign, from #ubuntu, with the day in the id and the irc tag', () => {
    expect(chats.map((r) => r.id)).toEqual(['irc-2011-03-01-0', 'irc-2011-03-01-1', 'irc-2011-03-02-0', 'irc-2011-03-02-1']);
    for (const r of chats) expect(r).toMatchObject({ label: 0, predator: 'neither', source: 'irc-ubuntu', family: 'irc', tags: ['irc'] });
  });

  it('puts all of a day in one split, and different days in different splits', () => {
    const many = loadIrcChats(ircDir(DAYS));
    const splitOfDay = new Map<string, Set<string>>();
    for (const r of many) {
      const day = r.id.slice('irc-'.length, 'irc-'.length + 10);
      splitOfDay.set(day, (splitOfDay.get(day) ?? new Set()).add(r.split));
    }
    expect(splitOfDay.size).toBe(DAYS.length);
    for (const s of splitOfDay.values()) expect(s.size).toBe(1);
    expect(new Set([...splitOfDay.values()].flatMap((s) => [...s])).size).toBeGreaterThan(1);
  });

  it('is deterministic, and a limit gives the first chats of the full run', () => {
    expect(JSON.stringify(loadIrcChats(ircDir(days)))).toBe(JSON.stringify(chats));
    expect(loadIrcChats(ircDir(days), { limit: 3 })).toEqual(chats.slice(0, 3));
  });
});

// ---- the real sets ------------------------------------------------------------------------------

const hasReal =
  existsSync(join(DEFAULT_DATA_DIR, 'sms-spam-collection', 'SMSSpamCollection')) && existsSync(join(DEFAULT_DATA_DIR, 'irc-disentanglement', 'train'));

describe.skipIf(!hasReal)('texting chats from the real sets', () => {
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const share = (rs: LabeledConversation[], split: string): number => rs.filter((r) => r.split === split).length / rs.length;

  it('builds hundreds of SMS chats of about 8 texts, split about 78/11/11, all parsing as two speakers', () => {
    const sms = loadSmsChats();
    expect(sms.length).toBeGreaterThan(450);
    expect(sms.length).toBeLessThan(700);
    expect(median(sms.map((r) => linesOf(r).length))).toBeGreaterThanOrEqual(6);
    expect(share(sms, 'train')).toBeGreaterThan(0.7);
    expect(share(sms, 'val')).toBeGreaterThan(0.06);
    expect(share(sms, 'test')).toBeGreaterThan(0.06);
    for (const r of sms) expectTwoSpeakerLines(r);
  });

  it('builds thousands of IRC exchanges from all 153 days quickly, whole days per split', () => {
    const start = performance.now();
    const irc = loadIrcChats();
    expect(performance.now() - start).toBeLessThan(10_000);
    expect(irc.length).toBeGreaterThan(2000);
    expect(median(irc.map((r) => linesOf(r).length))).toBeGreaterThanOrEqual(IRC_MIN_MESSAGES);
    const days = new Map<string, string>();
    for (const r of irc) {
      const day = r.id.slice(4, 14);
      expect(days.get(day) ?? r.split).toBe(r.split);
      days.set(day, r.split);
    }
    expect(days.size).toBe(153);
    for (const split of ['val', 'test']) expect([...days.values()].filter((s) => s === split).length).toBeGreaterThan(8);
    for (const r of irc) expectTwoSpeakerLines(r);
  });
});
