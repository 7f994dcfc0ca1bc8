import { describe, expect, it } from 'vitest';
import { countLines, parseTurns } from '../../../src/scoring/conversation.ts';

/** The turns without their line numbers, which the last block checks on their own. */
const speakerTexts = (text: string) => parseTurns(text).map(({ speaker, text: body }) => ({ speaker, text: body }));

describe('parseTurns: speaker lines are "name: text"', () => {
  it('reads user1: and user2: prefixes in any case as those speakers', () => {
    expect(speakerTexts('USER2: hi\nUser1: hello')).toEqual([
      { speaker: 'user2', text: 'hi' },
      { speaker: 'user1', text: 'hello' },
    ]);
  });

  it('maps other names by first appearance: the first to user1, the second to user2', () => {
    expect(speakerTexts('Bob: hi\nAlice: hey\nBob: how are you')).toEqual([
      { speaker: 'user1', text: 'hi' },
      { speaker: 'user2', text: 'hey' },
      { speaker: 'user1', text: 'how are you' },
    ]);
  });

  it('maps names like built-in object members (constructor, __proto__, toString) as any other names', () => {
    expect(speakerTexts('constructor: hi\n__proto__: hey\nConstructor: ok')).toEqual([
      { speaker: 'user1', text: 'hi' },
      { speaker: 'user2', text: 'hey' },
      { speaker: 'user1', text: 'ok' },
    ]);
  });

  it('matches other names case-insensitively', () => {
    expect(speakerTexts('Bob: a\nalice: b\nBOB: c').map((t) => t.speaker)).toEqual(['user1', 'user2', 'user1']);
  });

  it('gives a new name the user slot that an explicit user1/user2 prefix has not taken', () => {
    expect(speakerTexts('user1: hi\nmallory: hey').map((t) => t.speaker)).toEqual(['user1', 'user2']);
    expect(speakerTexts('user2: hi\nmallory: hey').map((t) => t.speaker)).toEqual(['user2', 'user1']);
  });

  it('reads names with combining marks (a decomposed José, Hindi, Thai), one speaker however the accent is typed', () => {
    const decomposed = 'Jose\u0301';
    expect(speakerTexts(`emma: hi\n${decomposed}: how old r u\nemma: 13\nJos\u00e9: cool`).map((t) => t.speaker)).toEqual([
      'user1',
      'user2',
      'user1',
      'user2',
    ]);
    expect(speakerTexts('राहुल: hi\nप्रिया: hello\nमาลี: x').map((t) => t.speaker)).toEqual(['user1', 'user2']);
    // Persian and Indic spellings with a zero-width non-joiner or joiner inside the name.
    expect(speakerTexts('می\u200cترا: hi\nक\u094d\u200dष: hello').map((t) => t.speaker)).toEqual(['user1', 'user2']);
  });

  it('skips a byte-order mark or a zero-width space before a name, so the first speaker keeps user1', () => {
    for (const mark of ['\ufeff', '\u200b', '\u200f']) {
      expect(speakerTexts(`${mark}mike: how old r u\nemma: 13\nmike: ok`)).toEqual([
        { speaker: 'user1', text: 'how old r u' },
        { speaker: 'user2', text: '13' },
        { speaker: 'user1', text: 'ok' },
      ]);
    }
  });

  it('reads a prefix after any Unicode space (a no-break space from an HTML copy, an ideographic space), and with one before its colon', () => {
    for (const space of ['\u00a0', '\u3000', '\u2007']) {
      expect(speakerTexts(`user1: hi\n${space}user2: im 13\nuser2${space}: u?`)).toEqual([
        { speaker: 'user1', text: 'hi' },
        { speaker: 'user2', text: 'im 13' },
        { speaker: 'user2', text: 'u?' },
      ]);
    }
  });

  it('keeps a third distinct name as plain text of the previous turn', () => {
    expect(speakerTexts('a: one\nb: two\ncarol: three')).toEqual([
      { speaker: 'user1', text: 'one' },
      { speaker: 'user2', text: 'two\ncarol: three' },
    ]);
  });

  it('continues the previous turn with a line that has no prefix', () => {
    expect(speakerTexts('user1: first line\nsecond line\r\nuser2: reply')).toEqual([
      { speaker: 'user1', text: 'first line\nsecond line' },
      { speaker: 'user2', text: 'reply' },
    ]);
  });

  it('gives text before the first prefix to user1', () => {
    expect(speakerTexts('just some text\nuser2: answer')).toEqual([
      { speaker: 'user1', text: 'just some text' },
      { speaker: 'user2', text: 'answer' },
    ]);
  });

  it('reads flat text (no speaker prefix anywhere) as turns of an unknown speaker, one per line', () => {
    expect(speakerTexts('no prefixes at all')).toEqual([{ speaker: 'unknown', text: 'no prefixes at all' }]);
    expect(speakerTexts('hey whats up\n\n  not much u  \r\nsame')).toEqual([
      { speaker: 'unknown', text: 'hey whats up' },
      { speaker: 'unknown', text: 'not much u' },
      { speaker: 'unknown', text: 'same' },
    ]);
    // A colon that is no prefix (a time, a URL) keeps text flat.
    expect(speakerTexts('meet at 12:30 ok http://x.example').map((t) => t.speaker)).toEqual(['unknown']);
  });

  it('reads flat text with a few `label: value` lines (under a quarter of its lines) as flat, the labels kept as text', () => {
    const flat = ['hey', 'hi there', 'how old r u', '14 u', 'age: 14', 'cool im 16', 'whats ur snap', 'snap: jess_x', 'added u', 'ok'];
    expect(speakerTexts(flat.join('\n'))).toEqual(flat.map((text) => ({ speaker: 'unknown', text })));
    expect(parseTurns(flat.join('\n')).map((t) => t.line)).toEqual(flat.map((_, i) => i));
    // A quarter of the lines or more is a chat with speakers.
    const chat = 'jess: hi\nhow are you\nwhat are you up to\nmark: not much\nbored\nyou?\njess: same';
    expect(speakerTexts(chat).map((t) => t.speaker)).toEqual(['user1', 'user2', 'user1']);
  });

  it('keeps the speakers of a chat whose messages run to many lines: a name that starts two lines is a speaker, not a label', () => {
    const message = (name: string) => [`${name}: so`, 'line one', 'line two', 'line three', 'line four', 'line five'];
    const chat = [...message('jess'), ...message('mark'), ...message('jess')].join('\n');
    expect(speakerTexts(chat).map((t) => t.speaker)).toEqual(['user1', 'user2', 'user1']);
    // Until a name comes back, such a chat's first message alone reads as flat text (the README's turn_scores note).
    expect(new Set(speakerTexts(message('jess').join('\n')).map((t) => t.speaker))).toEqual(new Set(['unknown']));
  });

  it('reads any text that names user1: or user2: directly as a chat with speakers, however few of its lines do', () => {
    const pasted = ['user1: look at this', ...Array.from({ length: 10 }, (_, i) => `pasted line ${i}`), 'user2: ok'].join('\n');
    expect(speakerTexts(pasted).map((t) => t.speaker)).toEqual(['user1', 'user2']);
  });

  it('drops turns whose text is empty', () => {
    expect(speakerTexts('user1:\nuser2:   \n\nuser1: ok\n')).toEqual([{ speaker: 'user1', text: 'ok' }]);
    expect(speakerTexts('   \n\n')).toEqual([]);
  });

  it('does not read a URL or a time as a speaker prefix', () => {
    expect(speakerTexts('user1: hi\nhttp://example.com/x\n12:30 works?\nsee https://a.b')).toEqual([
      { speaker: 'user1', text: 'hi\nhttp://example.com/x\n12:30 works?\nsee https://a.b' },
    ]);
  });

  it('accepts names with spaces, dots and dashes up to 32 characters, and no longer', () => {
    expect(speakerTexts('Mary-Jane O. Smith: hi\nuser2: yo').map((t) => t.speaker)).toEqual(['user1', 'user2']);
    const long = 'x'.repeat(33);
    expect(speakerTexts(`user2: a\n${long}: b`)).toEqual([{ speaker: 'user2', text: `a\n${long}: b` }]);
  });

  it('accepts a name whose colon ends the line', () => {
    expect(speakerTexts('alice:\nhello\nbob: hi')).toEqual([
      { speaker: 'user1', text: 'hello' },
      { speaker: 'user2', text: 'hi' },
    ]);
  });

  it('keeps a colon inside the text of a turn', () => {
    expect(speakerTexts('user1: note: bring snacks')).toEqual([{ speaker: 'user1', text: 'note: bring snacks' }]);
  });

  it('parses a 500,000-character conversation', () => {
    const text = Array.from({ length: 10_000 }, (_, i) => `user${(i % 2) + 1}: message number ${i} with a link http://x.y/z`).join('\n').padEnd(500_000, 'a');
    const turns = parseTurns(text.slice(0, 500_000));
    expect(turns.length).toBeGreaterThan(9_000);
  });
});

describe('parseTurns: each turn carries the 0-based line where it starts', () => {
  it('counts every line, continuation and blank lines included, across \\n, \\r\\n and \\r', () => {
    expect(parseTurns('user1: hi\nthere\r\n\ruser2: hello\ruser1: x').map((t) => t.line)).toEqual([0, 3, 4]);
  });
  it('keeps the line of a dropped empty turn out: the next turn has its own line', () => {
    expect(parseTurns('user1:\nuser2: b').map((t) => [t.speaker, t.line])).toEqual([['user2', 1]]);
  });
  it('gives each line of flat text its own line number, skipping blank lines', () => {
    expect(parseTurns('a\n\nb').map((t) => [t.speaker, t.line])).toEqual([
      ['unknown', 0],
      ['unknown', 2],
    ]);
  });
  it('countLines splits as parseTurns does', () => {
    expect([countLines(''), countLines('a'), countLines('a\nb'), countLines('a\r\nb\rc\n')]).toEqual([1, 1, 2, 4]);
  });
});
