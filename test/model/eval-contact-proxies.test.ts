// The proxies for strangers' first contact and relationships under way (scripts/eval/contact-proxies.ts):
// which records each row counts, and what it reports, checked with stand-in scorers whose answers are known.
import { describe, expect, it } from 'vitest';
import { CONTACT_TEST_FAMILIES, SHORT_EXCERPT_CHARS } from '../../scripts/data/contact.ts';
import { MEDIUM_BAND, contactMarkdown, contactMetrics, contactProxyRecords, evaluateContactProxies, evaluatePeerBand } from '../../scripts/eval/contact-proxies.ts';
import type { Prediction, ScoreRequest } from '../../src/scoring/types.ts';

const records = contactProxyRecords();
const constant = (score: number) => ({
  score: async (requests: ScoreRequest[]): Promise<Prediction[]> => requests.map(() => ({ harmful_score: score }) as Prediction),
});

describe('contact proxies', () => {
  it('draws the same records every time, with real SMS and IRC test chats that are all benign', () => {
    const again = contactProxyRecords();
    expect(again.contact.map((r) => r.conversation)).toEqual(records.contact.map((r) => r.conversation));
    expect(again.short.map((r) => r.conversation)).toEqual(records.short.map((r) => r.conversation));
    expect(records.sms.length).toBeGreaterThan(20);
    expect(records.irc.length).toBeGreaterThan(100);
    for (const r of [...records.sms, ...records.irc]) {
      expect(r.label).toBe(0);
      expect(r.split).toBe('test');
    }
  });

  it('reports every benign chat flagged and every harmful one found when all score above 0.5, and the reverse below it', async () => {
    const high = await evaluateContactProxies(constant(0.9), records);
    const low = await evaluateContactProxies(constant(0.1), records);
    for (const r of high) {
      if (r.benign_flagged !== null) expect(r.benign_flagged).toBe(1);
      if (r.recall_at_0_5 !== null) expect(r.recall_at_0_5).toBe(1);
      // Ties everywhere: ROC-AUC is 0.5 with ties averaged.
      if (r.roc_auc !== null) expect(r.roc_auc).toBe(0.5);
    }
    for (const r of low) {
      if (r.benign_flagged !== null) expect(r.benign_flagged).toBe(0);
      if (r.recall_at_0_5 !== null) expect(r.recall_at_0_5).toBe(0);
    }
  });

  it('counts a benign stranger chat in the teenage-age row only when a number from 13 to 17 is stated', async () => {
    // A stand-in that flags exactly the chats stating such an age: the row's benign chats are all flagged.
    const teen = /(?:^|[\s/,.(])(1[3-7])(?=$|[\s/,.)!?]|\s?[mfMF]\b)/;
    const scorer = {
      score: async (requests: ScoreRequest[]): Promise<Prediction[]> =>
        requests.map((r) => ({ harmful_score: teen.test(r.conversation) ? 0.9 : 0.1 }) as Prediction),
    };
    const rows = await evaluateContactProxies(scorer, records);
    const row = rows.find((r) => r.slice === 'strangers, benign, a teenage age stated');
    expect(row?.chats).toBeGreaterThan(50);
    expect(row?.harmful).toBe(0);
    expect(row?.benign_flagged).toBe(1);
  });

  it('has a row for each held-out family, for the short flat excerpts and for each real set as written and flat', async () => {
    const rows = await evaluateContactProxies(constant(0.2), records);
    for (const f of CONTACT_TEST_FAMILIES) expect(rows.some((r) => r.slice.includes(f.name) && r.chats > 20)).toBe(true);
    expect(rows.find((r) => r.slice.startsWith('flat excerpts'))?.chats).toBe(records.short.length);
    expect(rows.find((r) => r.slice.includes('pickups and rides'))).toMatchObject({ chats: records.rides.length, harmful: 0, roc_auc: null });
    expect(records.rides.every((r) => r.split === 'test' && r.family === 'rides_child')).toBe(true);
    expect(records.short.every((r) => r.conversation.length < SHORT_EXCERPT_CHARS)).toBe(true);
    expect(rows.filter((r) => r.slice.startsWith('real ')).map((r) => r.chats)).toEqual([records.sms.length, records.sms.length, records.irc.length, records.irc.length]);
    const metrics = contactMetrics(rows);
    expect(metrics.contact_a_relationship_under_way_roc_auc).toBe(0.5);
    expect(metrics.contact_real_irc_chats_flat_benign_flagged).toBe(0);
    expect(contactMarkdown(rows)).toContain('| a relationship under way |');
  });

  it('gives each figure its 95 % interval over the slice\'s chats, which holds the figure and is wider for the smaller slice', async () => {
    // A stand-in that flags every fourth chat it scores, so every slice has figures inside 0 and 1.
    let k = 0;
    const quarter = { score: async (requests: ScoreRequest[]): Promise<Prediction[]> => requests.map(() => ({ harmful_score: k++ % 4 === 0 ? 0.9 : 0.1 }) as Prediction) };
    const rows = await evaluateContactProxies(quarter, records);
    for (const r of rows) {
      for (const [v, i] of [[r.roc_auc, r.roc_auc_interval], [r.recall_at_0_5, r.recall_interval], [r.benign_flagged, r.benign_flagged_interval]] as const) {
        expect(i === null).toBe(v === null);
        if (v === null || i === null) continue;
        expect(i[0]).toBeLessThanOrEqual(v);
        expect(i[1]).toBeGreaterThanOrEqual(v);
        expect(i[0]).toBeGreaterThanOrEqual(0);
        expect(i[1]).toBeLessThanOrEqual(1);
      }
    }
    const width = (slice: string): number => {
      const i = rows.find((r) => r.slice === slice)?.benign_flagged_interval;
      return i ? i[1] - i[0] : Number.NaN;
    };
    expect(width('real SMS chats (test split), as written')).toBeGreaterThan(width('real IRC chats (held-out days), as written'));
    const sms = rows.find((r) => r.slice === 'real SMS chats (test split), as written');
    expect(contactMarkdown(rows)).toContain(`| ${records.sms.length} | 0 | n/a | n/a | ${Math.round((sms?.benign_flagged ?? 0) * 1000) / 1000} [`);
  });

  it("places two stated teenagers' sexual talk below, in or above the Medium Risk band by its score, band edges as the spec's", async () => {
    expect(records.peers.length).toBeGreaterThan(100);
    expect(records.peers.every((r) => r.label === 0 && r.family === 'stranger_peers_sexual')).toBe(true);
    expect(await evaluatePeerBand(constant(MEDIUM_BAND.min), records)).toMatchObject({ below: 0, medium: 1, high_or_critical: 0 });
    expect(await evaluatePeerBand(constant(MEDIUM_BAND.max), records)).toMatchObject({ below: 0, medium: 0, high_or_critical: 1 });
    expect(await evaluatePeerBand(constant(0.39), records)).toMatchObject({ below: 1, medium: 0, high_or_critical: 0 });
  });
});
