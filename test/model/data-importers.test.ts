import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCorpus } from '../../scripts/data/corpus.ts';
import { ImportError, importJsonl, importPan12 } from '../../scripts/data/importers.ts';
import { DEFAULT_DATA_DIR, loadPersonaChat, loadTopicalChat, parseCsv } from '../../scripts/data/real.ts';
import { parseTurns } from '../../src/scoring/conversation.ts';

// A hand-written file in the PAN12 format (no real PAN12 data is used anywhere in the project).
const PAN12_XML = `<?xml version="1.0" encoding="UTF-8"?>
<conversations>
<conversation id="c-one">
  <message line="1"><author>aaa111</author><time>03:20</time><text>hey how r u</text></message>
  <message line="2"><author>bbb222</author><time>03:21</time><text>good &amp; you?</text></message>
  <message line="3"><author>aaa111</author><time>03:21</time><text>are your parents home &lt;3</text></message>
</conversation>
<conversation id="c-two">
  <message line="1"><author>ccc333</author><time>10:00</time><text>did you finish the
  homework</text></message>
  <message line="2"><author>ddd444</author><time>10:01</time><text>yes</text></message>
</conversation>
<conversation id="c-three">
  <message line="1"><author>eee555</author><time>10:00</time><text>hello</text></message>
  <message line="2"><author>bbb222</author><time>10:01</time><text><![CDATA[hi there]]></text></message>
</conversation>
<conversation id="c-four">
  <message line="1"><author>fff666</author><time>10:00</time><text>only me here</text></message>
</conversation>
<conversation id="c-five">
  <message line="1"><author>ggg777</author><time>10:00</time><text>hi all</text></message>
  <message line="2"><author>hhh888</author><time>10:00</time><text>hey</text></message>
  <message line="3"><author>aaa111</author><time>10:01</time><text>hi</text></message>
</conversation>
</conversations>`;

describe('PAN12 importer', () => {
  const { records, stats } = importPan12(PAN12_XML, 'aaa111\nbbb222\n');
  const byId = Object.fromEntries(records.map((r) => [r.id, r]));

  it('marks a conversation harmful with the listed predator on the side the server will call them', () => {
    expect(byId['pan12-c-one']).toMatchObject({ label: 1, predator: 'user1' });
    expect(byId['pan12-c-three']).toMatchObject({ label: 1, predator: 'user2' });
    expect(byId['pan12-c-two']).toMatchObject({ label: 0, predator: 'neither' });
  });

  it('writes one user1/user2 line per message, decoding entities and folding line breaks', () => {
    expect(byId['pan12-c-one']?.conversation).toBe('user1: hey how r u\nuser2: good & you?\nuser1: are your parents home <3');
    expect(byId['pan12-c-two']?.conversation).toBe('user1: did you finish the homework\nuser2: yes');
    expect(parseTurns(byId['pan12-c-three']?.conversation ?? '')).toEqual([
      { speaker: 'user1', text: 'hello', line: 0 },
      { speaker: 'user2', text: 'hi there', line: 1 },
    ]);
  });

  it('skips single-author chats and chats whose predator is a third author', () => {
    expect(byId['pan12-c-four']).toBeUndefined();
    expect(byId['pan12-c-five']).toBeUndefined();
    expect(stats).toEqual({ conversations: 3, harmful: 2, skipped: 2 });
  });
});

describe('JSONL importer', () => {
  it('reads the documented format, keeping ages and an explicit split', () => {
    const text = [
      JSON.stringify({ conversation: 'user1: hi\nuser2: hey', label: 0 }),
      JSON.stringify({ id: 'x', conversation: 'a: hi\nb: keep it secret', label: 1, predator: 'user2', age_a: '13', age_b: 'adult', split: 'test' }),
      '',
    ].join('\n');
    const [benign, harmful] = importJsonl(text, 'mine');
    expect(benign).toMatchObject({ label: 0, predator: 'neither', source: 'mine', id: 'mine-1' });
    expect(harmful).toMatchObject({ id: 'mine-x', label: 1, predator: 'user2', age_a: '13', age_b: 'adult', split: 'test' });
  });

  it.each([
    ['{not json', /line 1: not valid JSON/],
    ['{"conversation": "", "label": 0}', /conversation/],
    ['{"conversation": "user1: hi", "label": 2}', /label/],
    ['{"conversation": "user1: hi", "label": 1}', /predator/],
    ['{"conversation": "user1: hi", "label": 1, "predator": "neither"}', /needs predator/],
    ['{"conversation": "user1: hi", "label": 0, "predator": "user1"}', /benign/],
    ['{"conversation": "user1: hi", "label": 0, "age_a": 13}', /age_a/],
    ['{"conversation": "user1: hi", "label": 0, "split": "dev"}', /split/],
  ])('rejects %s with a message naming the problem', (line, message) => {
    expect(() => importJsonl(line)).toThrow(ImportError);
    expect(() => importJsonl(line)).toThrow(message);
  });

  it('feeds the corpus builder next to generated data', () => {
    const dir = mkdtempSync(join(tmpdir(), 'jsonl-'));
    const path = join(dir, 'mine.jsonl');
    writeFileSync(path, JSON.stringify({ conversation: 'user1: hi\nuser2: hey', label: 0 }) + '\n');
    const corpus = buildCorpus({ seed: 1, n: 5, real: false, synthetic: true, dataDir: DEFAULT_DATA_DIR, jsonl: [path] });
    expect(corpus.map((r) => r.source)).toEqual(['generator', 'generator', 'generator', 'generator', 'generator', 'jsonl0']);
  });
});

describe('real benign chats', () => {
  it('parses quoted CSV fields with commas, newlines and doubled quotes', () => {
    expect(parseCsv('a,b\n"x, y","line1\nline2 ""q"""\n')).toEqual([
      ['a', 'b'],
      ['x, y', 'line1\nline2 "q"'],
    ]);
  });

  it('loads Topical-Chat and Synthetic-Persona-Chat as user1/user2 benign chats, test_freq held out', () => {
    const topical = loadTopicalChat();
    const persona = loadPersonaChat();
    expect(topical.length).toBeGreaterThan(1500);
    expect(persona.length).toBeGreaterThan(900);
    for (const r of [...topical, ...persona]) {
      expect(r.label).toBe(0);
      expect(r.conversation).toMatch(/^user1: /);
      expect(parseTurns(r.conversation).some((t) => t.speaker === 'user2')).toBe(true);
    }
    expect(topical.filter((r) => r.split === 'test').length).toBeGreaterThan(500);
    expect(new Set(persona.map((r) => r.split))).toEqual(new Set(['train', 'val', 'test']));
  });
});
