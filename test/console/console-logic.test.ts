// The review console's logic that needs no browser (console/src/: input, results, explain, api): what
// a paste or a file becomes, how results sort, filter and export (ids and numbers, never text, no
// spreadsheet formulas), how rises and shades are read, and what a reviewer reads for each failure.
import { describe, expect, it } from 'vitest';
import { ApiError, failureMessage, KeyError, KeyHolder, NetworkError, retryAfterSeconds, scoresOf } from '../../console/src/api.ts';
import { alignTurns, rises, shade } from '../../console/src/explain.ts';
import { InputError, readChatInput, readJsonl, turnsOfText } from '../../console/src/input.ts';
import { bandCounts, csvCell, EXPORT_COLUMNS, filterRows, sortRows, toCsv, toJsonl, type Row } from '../../console/src/results.ts';
import type { Explanation, Scores } from '../../console/src/types.ts';

const scores = (score: number, level: Scores['risk_level'], extra: Partial<Scores> = {}): Scores => ({
  harmfulness_score: score,
  is_harmful: score > 0.5,
  risk_level: level,
  predatory_user: score > 0.5 ? 'user1' : 'neither',
  user_probabilities: { user1: score / 2, user2: score / 2, neither: 1 - score },
  confidence: 0.5,
  num_segments: 1,
  used_age_features: false,
  ...extra,
});

describe('a pasted chat', () => {
  it('is text for v1 unless it is JSON messages or a /v2 body; typed ages win over the body', () => {
    expect(readChatInput('user1: hi\nuser2: [ok]', { age_a: ' 34 ', age_b: '' })).toEqual({
      kind: 'text',
      conversation: 'user1: hi\nuser2: [ok]',
      ages: { age_a: '34' },
    });
    // Text that merely starts with a bracket is text.
    expect(readChatInput('[12:30] alice: hi', {}).kind).toBe('text');
    expect(readChatInput('[{"user":"user1","text":"hi"},{"user":"user2","text":"yo"}]', {})).toEqual({
      kind: 'messages',
      messages: [
        { user: 'user1', text: 'hi' },
        { user: 'user2', text: 'yo' },
      ],
      ages: {},
    });
    expect(readChatInput('{"messages":[{"user":"user2","text":"x"}],"age_a":"adult","age_b":"13"}', { age_b: 'minor' })).toMatchObject({
      kind: 'messages',
      ages: { age_a: 'adult', age_b: 'minor' },
    });
  });

  it('says what is wrong with JSON that is not messages, or an empty box', () => {
    expect(() => readChatInput('   ', {})).toThrow(InputError);
    expect(() => readChatInput('[1, 2]', {})).toThrow(/messages\[0\] must be \{"user": "user1" or "user2"/);
    expect(() => readChatInput('{"conversation":"user1: hi"}', {})).toThrow(/"messages" must be a non-empty array/);
    expect(() => readChatInput('{"messages":[{"user":"user3","text":"x"}]}', {})).toThrow(InputError);
  });

  it('shows v1 turns as the appliance parses them: names mapped, continuation lines joined, flat text unknown', () => {
    expect(turnsOfText('alice: hi\nbob: hey\nmore from bob\nalice: ok')).toEqual([
      { user: 'user1', text: 'hi', line: 0 },
      { user: 'user2', text: 'hey\nmore from bob', line: 1 },
      { user: 'user1', text: 'ok', line: 3 },
    ]);
    expect(turnsOfText('no speakers here\nnor here').map((t) => t.user)).toEqual(['unknown', 'unknown']);
  });
});

describe('a JSONL file', () => {
  it('reads /v2 items and conversation strings, names lines without an id, and forces explanations on', () => {
    const file = [
      JSON.stringify({ id: 'a', messages: [{ user: 'user1', text: 'hi' }], age_a: '34', label: 'dropped', explain: false }),
      '',
      JSON.stringify('alice: hi\nbob: hey'),
      JSON.stringify({ messages: [{ user: 'user2', text: 'yo', timestamp: '2026-11-21T16:00:00Z' }] }),
    ].join('\r\n');
    const read = readJsonl(file);
    expect(read.refused).toEqual([]);
    expect(read.chats).toEqual([
      { line: 1, item: { id: 'a', messages: [{ user: 'user1', text: 'hi' }], age_a: '34', explain: true } },
      { line: 3, item: { id: 'line-3', messages: [{ user: 'user1', text: 'hi' }, { user: 'user2', text: 'hey' }], explain: true } },
      { line: 4, item: { id: 'line-4', messages: [{ user: 'user2', text: 'yo', timestamp: '2026-11-21T16:00:00Z' }], explain: true } },
    ]);
  });

  it('leaves out, with the line and why, what a /v2 job cannot take; the rest is kept', () => {
    const file = [
      'not json',
      JSON.stringify('flat text with no speaker'),
      JSON.stringify({ id: 'x', messages: [{ user: 'user1', text: 'a' }] }),
      JSON.stringify({ id: 'x', messages: [{ user: 'user1', text: 'b' }] }),
      JSON.stringify({ id: '', messages: [{ user: 'user1', text: 'c' }] }),
      JSON.stringify({ id: 'y', messages: [] }),
      JSON.stringify(42),
      JSON.stringify({ id: 'z', messages: [{ user: 'user1', text: 'd' }], age_b: 13 }),
    ].join('\n');
    const read = readJsonl(file);
    expect(read.chats.map((c) => c.item.id)).toEqual(['x']);
    expect(read.refused).toEqual([
      { line: 1, reason: 'not valid JSON' },
      { line: 2, reason: expect.stringMatching(/no speaker prefixes .*a \/v2 job needs them; score it under One chat/) },
      { line: 4, reason: 'id "x" is already used on line 3' },
      { line: 5, reason: '"id" must be a string of 1 to 256 characters' },
      { line: 6, reason: 'the item: "messages" must be a non-empty array' },
      { line: 7, reason: 'neither a conversation string nor an object with "messages"' },
      { line: 8, reason: expect.stringMatching(/age_b must be a string/) },
    ]);
  });
});

describe('results', () => {
  const rows: Row[] = [
    { id: 'b', line: 2, scores: scores(0.3, 'Low Risk') },
    { id: 'a', line: 1, scores: scores(0.9, 'Critical', { explanation: { turn_scores: [0.2, 0.9], first_alert_index: 1, evidence: [] } }) },
    { id: 'c', line: 3, scores: scores(0.3, 'Low Risk', { confidence: 0.9 }) },
  ];

  it('sort by score (ties in file order), id or confidence, and filter by band with counts', () => {
    expect(sortRows(rows, 'score', 'descending').map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(sortRows(rows, 'score', 'ascending').map((r) => r.id)).toEqual(['b', 'c', 'a']);
    expect(sortRows(rows, 'id', 'ascending').map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(sortRows(rows, 'confidence', 'descending').map((r) => r.id)).toEqual(['c', 'a', 'b']);
    expect(filterRows(rows, 'Low Risk').map((r) => r.id)).toEqual(['b', 'c']);
    expect(filterRows(rows, 'all')).toHaveLength(3);
    expect([...bandCounts(rows)]).toEqual([
      ['Critical', 1],
      ['High Risk', 0],
      ['Medium Risk', 0],
      ['Low Risk', 2],
      ['Safe', 0],
    ]);
  });

  it('export as CSV and JSONL: ids, numbers and fixed labels only', () => {
    const csv = toCsv(rows);
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe(EXPORT_COLUMNS.join(','));
    expect(lines[2]).toBe('"a",1,0.9,true,"Critical","user1",0.45,0.45,0.09999999999999998,0.5,1,false,1');
    const jsonl = toJsonl(rows).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(jsonl).toHaveLength(3);
    for (const record of jsonl) expect(Object.keys(record)).toEqual([...EXPORT_COLUMNS]);
    expect(jsonl[0]).toMatchObject({ id: 'b', harmfulness_score: 0.3, first_alert_index: null });
  });

  it('a CSV string cell is always quoted and never starts a spreadsheet formula, whatever separator the spreadsheet splits on', () => {
    expect(csvCell('plain')).toBe('"plain"');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    for (const start of ['+', '-', '@', '\t']) expect(csvCell(`${start}1`)).toBe(`"'${start}1"`);
    // Excel in a semicolon locale splits an unquoted cell at `;`: the formula after it would be a cell of its own.
    expect(csvCell('x;=1+1')).toBe('"x;=1+1"');
    expect(csvCell(null)).toBe('');
    expect(csvCell(0.25)).toBe('0.25');
  });
});

describe('reading an explanation', () => {
  const e: Explanation = { turn_scores: [0.1, 0.4, 0.35, 0.8], first_alert_index: 3, evidence: [{ index: 3, user: 'user1', weight: 0.45 }, { index: 1, user: 'user2', weight: 0.3 }] };

  it('rises: the difference to the entry before; the first entry only when it is evidence or cannot be', () => {
    const r = rises(e);
    expect(r[0]).toBe(0);
    expect(r[1]).toBeCloseTo(0.3);
    expect(r[2]).toBeCloseTo(-0.05);
    expect(r[3]).toBeCloseTo(0.45);
    expect(rises({ ...e, evidence: [{ index: 0, user: 'user1', weight: 0.1 }] })[0]).toBe(0.1);
    const five = [1, 2, 3, 4, 5].map((index) => ({ index, user: 'user1' as const, weight: 0.01 }));
    expect(rises({ turn_scores: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], first_alert_index: 5, evidence: five })[0]).toBeUndefined();
  });

  it('shades 0 (no rise) to 5 (0.2 or more)', () => {
    expect([undefined, -0.1, 0, 0.001, 0.02, 0.05, 0.1, 0.15, 0.5].map(shade)).toEqual([0, 0, 0, 1, 1, 2, 3, 4, 5]);
  });

  it('v1 turns follow turn_lines; where the parser disagrees, the lines the appliance names are shown', () => {
    const text = 'user1: a\nuser2: b\nmore b';
    const turns = turnsOfText(text);
    const explained: Explanation = { turn_scores: [0.1, 0.2], turn_lines: [0, 1], first_alert_index: null, evidence: [] };
    expect(alignTurns(text, turns, explained)).toBe(turns);
    expect(alignTurns(text, turns, { ...explained, turn_scores: [0.1, 0.2, 0.3], turn_lines: [0, 1, 2] })).toEqual([
      { user: 'unknown', text: 'user1: a', line: 0 },
      { user: 'unknown', text: 'user2: b', line: 1 },
      { user: 'unknown', text: 'more b', line: 2 },
    ]);
  });
});

describe('calls and their failures', () => {
  it('the key holder keeps a key a header can carry, and says why not otherwise', () => {
    const key = new KeyHolder();
    expect(key.present).toBe(false);
    expect(() => key.authorization()).toThrow(KeyError);
    expect(() => key.set('  ')).toThrow(/Type an API key/);
    expect(() => key.set('clé-ünïcode-🙂')).toThrow(/printable ASCII/);
    key.set(' abc123 ');
    expect(key.authorization()).toBe('Bearer abc123');
    key.clear();
    expect(key.present).toBe(false);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterSeconds('42')).toBe(42);
    expect(retryAfterSeconds(null)).toBeUndefined();
    expect(retryAfterSeconds('soon')).toBeUndefined();
    const now = Date.parse('2026-11-25T12:00:00Z');
    expect(retryAfterSeconds('Wed, 25 Nov 2026 12:00:30 GMT', now)).toBe(30);
  });

  it('words each failure for a reviewer: wrong key, rate limit with its retry time, degraded model', () => {
    expect(failureMessage(new ApiError(401, 'API key required (Bearer token)', undefined))).toMatch(/^No usable API key reached the appliance \(401/);
    expect(failureMessage(new ApiError(403, 'Invalid API key', undefined))).toMatch(/^The appliance does not accept this API key \(403: Invalid API key\)/);
    expect(failureMessage(new ApiError(429, 'Rate limit exceeded: 1 requests per window; retry in 1 minute', 57))).toMatch(/^Rate limit reached .*Retry in 57 s \(at \d\d:\d\d:\d\d\)\.$/);
    expect(failureMessage(new ApiError(503, 'Model is not loaded; the service is degraded', 30))).toMatch(/^The model is not loaded: the appliance is degraded .*Retry in 30 s/);
    expect(failureMessage(new ApiError(503, 'Scoring queue is full; retry later', 1))).toMatch(/^The appliance cannot take this now .*Retry in 1 s/);
    expect(failureMessage(new ApiError(422, 'conversations[0].age_a must be ...', undefined))).toMatch(/^The appliance refused the input \(422/);
    expect(failureMessage(new NetworkError('Failed to fetch'))).toMatch(/^Could not reach the appliance/);
  });

  it('checks answers against the documented shape, v1 and v2 alike', () => {
    const v1 = { harmful_score: 0.7, is_harmful: true, risk_level: 'High Risk', predatory_user: 'user2', user_probabilities: { user1: 0.1, user2: 0.6, neither: 0.3 }, confidence: 0.4, num_segments: 1, used_age_features: true, conversation_preview: 'x' };
    expect(scoresOf(v1, 'harmful_score')).toMatchObject({ harmfulness_score: 0.7, risk_level: 'High Risk', used_age_features: true });
    expect(() => scoresOf({ ...v1, risk_level: 'Severe' }, 'harmful_score')).toThrow(/documented shape/);
    expect(() => scoresOf('<html>', 'harmfulness_score')).toThrow(/not a JSON object/);
    expect(() => scoresOf({ ...v1, explanation: { turn_scores: ['a'] } }, 'harmful_score')).toThrow(/explanation/);
  });
});
