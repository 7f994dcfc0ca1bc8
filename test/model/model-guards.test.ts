// Shortcut guards run against the SHIPPED model (models/conversation-risk) through the server's own
// scoring path, with the issue's own targets (issue "The model reads real chats"): every benign short
// chat at or below 0.6, and at least 90 % of conversations moving by less than 0.15 under each re-cut.
// Long benign chats of repeated small talk, with or without one everyday mention of an app, a picture
// or a meeting, are flagged no more often than flattened benign chats may be (the eval's slice, whole).
// Model 1.1.0 broke them outright (a lone `user1: hi` scored 1.0; flattening moved a third of the
// scores by 0.15 or more). The re-cut rule is measured as `npm run eval` measures it, by the same
// function on the same 1,500 conversations of the shipped model's test split (real chats, hosted
// exchanges, excerpts and generated chats alike), so a model that passes here passes there and the
// other way round. Stranger first contacts, relationships under way, short flat excerpts, real IRC
// chats and stated peers' sexual talk (the eval's issue-32 proxies) are held to floors between 3.5.0's
// figures and the later releases' (relationships: between 3.6.0's and 3.7.0's), so a release cannot
// slip back on the real-chat evaluation's two failure kinds unnoticed; so are the excerpts written by hand,
// blind to the generator (scripts/eval/written-excerpts.ts). Each failure prints the measured figure.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScorer, type EngineScorer } from '../../src/scoring/scorer.ts';
import type { ScoreRequest } from '../../src/scoring/types.ts';
import { shippedTestSplit } from '../../scripts/data/corpus.ts';
import { DEFAULT_DATA_DIR } from '../../scripts/data/real.ts';
import { RECUTS, type Recut } from '../../scripts/data/recut.ts';
import { scoreInBatches } from '../../scripts/eval/harness.ts';
import { RECUT_MAX_MOVE, RECUT_SAMPLE, RECUT_TARGET_SHARE, recutInvariance, type RecutReport } from '../../scripts/eval/recut-invariance.ts';
import { SHORT_TARGETS, shortBenignChats } from '../../scripts/eval/short-chats.ts';
import { LONG_TALK_BENIGN, LONG_TALK_TARGETS, evaluateLongSmallTalk } from '../../scripts/eval/long-small-talk.ts';
import { CONTACT_FLOORS, contactProxyRecords, evaluateContactProxies, evaluatePeerBand } from '../../scripts/eval/contact-proxies.ts';
import type { ProxyRow } from '../../scripts/eval/proxy-rows.ts';
import { WRITTEN_FLOORS, WRITTEN_SETS, evaluateWrittenExcerpts } from '../../scripts/eval/written-excerpts.ts';

const MODEL_DIR = join(import.meta.dirname, '../../models/conversation-risk');

/** [figure, measured, bound, whether the bound is a floor (>=) or a ceiling (<=)] */
type Bound = [string, number, number, 'min' | 'max'];
type ProxyFigure = 'roc_auc' | 'benign_flagged';

/** A proxy row's figure by its slice's name; throws where the slice or the figure is missing (`where`: whose rows). */
function proxyFigure(rows: readonly ProxyRow[], slice: string, key: ProxyFigure, where: string): number {
  const v = rows.find((x) => x.slice === slice)?.[key];
  if (v === null || v === undefined) throw new Error(`no ${key} for ${slice} in ${where}`);
  return v;
}

/** Each check past its bound, as `name measured < bound` (or `>`). */
function outOfBounds(checks: readonly Bound[]): string[] {
  return checks
    .filter(([, v, bound, kind]) => (kind === 'min' ? v < bound : v > bound))
    .map(([name, v, bound, kind]) => `${name} ${v.toFixed(3)} ${kind === 'min' ? '<' : '>'} ${bound}`);
}

describe('shipped model: shortcut guards', () => {
  let scorer: EngineScorer;
  let recut: Promise<RecutReport> | undefined;

  beforeAll(async () => {
    scorer = await createScorer({ modelDir: MODEL_DIR, workers: 1, intraOpThreads: 1, maxQueue: 10_000, timeoutMs: 120_000 });
  });
  afterAll(async () => {
    await scorer?.close();
  });

  /** The scorer, or the load error when the shipped package does not load: no guard can pass then. */
  function loaded(): EngineScorer {
    if (!scorer.ready) throw new Error(`the shipped model at models/conversation-risk did not load, so no guard can pass: ${scorer.loadError}`);
    return scorer;
  }

  async function scores(requests: readonly ScoreRequest[]): Promise<number[]> {
    return (await scoreInBatches(loaded(), requests)).map((p) => p.harmful_score);
  }

  it(`rule "short-chat floor": every benign short chat scores <= ${SHORT_TARGETS.benign_max_score}`, async () => {
    const chats = shortBenignChats();
    const s = await scores(chats.map((c) => ({ conversation: c.conversation })));
    const over = chats.map((c, i) => ({ c: c.conversation, s: s[i] as number })).filter((x) => x.s > SHORT_TARGETS.benign_max_score);
    const worst = [...over].sort((a, b) => b.s - a.s).slice(0, 5).map((x) => `${x.s.toFixed(3)} ${JSON.stringify(x.c)}`);
    expect(
      over.length,
      `short-chat floor: ${over.length} of ${chats.length} benign short chats (share ${(over.length / chats.length).toFixed(3)}) score above ${SHORT_TARGETS.benign_max_score}; max ${Math.max(...s).toFixed(3)}; worst: ${worst.join('; ')}`,
    ).toBe(0);
  });

  it(`rule "long repeated small talk": benign chats, untouched or with one everyday mention, flagged <= ${LONG_TALK_TARGETS.benign_flagged_max} with speakers and flattened`, async () => {
    const rows = await evaluateLongSmallTalk(loaded(), LONG_TALK_BENIGN);
    const over = rows.filter((r) => r.flagged > LONG_TALK_TARGETS.benign_flagged_max);
    expect(
      over.map((r) => `${r.variant}, ${r.rendering}: ${r.flagged.toFixed(3)} of ${r.chats} flagged, max ${r.max_score.toFixed(3)}`),
      `long repeated small talk: ${rows.map((r) => `${r.variant}, ${r.rendering} ${r.flagged.toFixed(3)}`).join('; ')}`,
    ).toEqual([]);
    expect(rows).toHaveLength(4);
  });

  it('rule "strangers and relationships": the issue-32 proxies stay at or above their floors (CONTACT_FLOORS)', async () => {
    // The real SMS and IRC chats are read in place, as for the re-cut guard below.
    if (!existsSync(DEFAULT_DATA_DIR)) throw new Error(`the contact proxies hold real chats from ${DEFAULT_DATA_DIR}, which is missing`);
    const records = contactProxyRecords();
    const rows = await evaluateContactProxies(loaded(), records);
    const peers = await evaluatePeerBand(loaded(), records);
    const figure = (slice: string, key: ProxyFigure): number => proxyFigure(rows, slice, key, 'the contact proxies');
    const f = CONTACT_FLOORS;
    const checks: Bound[] = [
      ['strangers ROC-AUC', figure('first contact between strangers', 'roc_auc'), f.strangers_roc_auc_min, 'min'],
      ["strangers' benign flagged", figure('first contact between strangers', 'benign_flagged'), f.strangers_benign_flagged_max, 'max'],
      ['relationships ROC-AUC', figure('a relationship under way', 'roc_auc'), f.relationships_roc_auc_min, 'min'],
      ['short flat excerpts ROC-AUC', figure('flat excerpts under 1,000 characters', 'roc_auc'), f.short_excerpt_roc_auc_min, 'min'],
      ['real IRC flagged', figure('real IRC chats (held-out days), as written', 'benign_flagged'), f.real_irc_flagged_max, 'max'],
      ["peers' sexual talk High Risk or Critical", peers.high_or_critical, f.peers_high_or_critical_max, 'max'],
    ];
    const failed = outOfBounds(checks);
    const measured = Object.fromEntries(checks.map(([name, v]) => [name, v]));
    expect(failed, `issue-32 proxies: ${JSON.stringify(measured)}`).toEqual([]);
  }, 600_000);

  it('rule "excerpts written by hand": each set, blind to the generator, stays at or above its floors (WRITTEN_FLOORS)', async () => {
    const f = WRITTEN_FLOORS;
    const checks: Bound[] = [];
    for (const set of WRITTEN_SETS) {
      const r = await evaluateWrittenExcerpts(loaded(), set);
      const figure = (slice: string, key: ProxyFigure): number => proxyFigure(r.rows, slice, key, `the ${set} set`);
      checks.push(
        [`${set}: flat ROC-AUC`, figure('flat: every excerpt', 'roc_auc'), f.flat_roc_auc_min, 'min'],
        [`${set}: strangers' benign flagged flat`, figure('flat: first contact between strangers', 'benign_flagged'), f.strangers_benign_flagged_max, 'max'],
        [`${set}: relationships ROC-AUC flat`, figure('flat: a relationship under way', 'roc_auc'), f.relationships_roc_auc_min, 'min'],
        [`${set}: groomer named`, r.predator_named, f.predator_named_min, 'min'],
      );
    }
    const failed = outOfBounds(checks);
    const measured = Object.fromEntries(checks.map(([name, v]) => [name, v]));
    expect(failed, `excerpts written by hand: ${JSON.stringify(measured)}`).toEqual([]);
  }, 300_000);

  /** The eval's re-cut report on the shipped test split, computed once for the three re-cuts. */
  function recutReport(): Promise<RecutReport> {
    // The real chats are read in place from ../shared/data, as training reads them: without them the
    // sample would be another one, so a missing folder fails here rather than quietly guarding less.
    if (!existsSync(DEFAULT_DATA_DIR)) throw new Error(`the guard's test split holds real chats from ${DEFAULT_DATA_DIR}, which is missing`);
    recut ??= recutInvariance(loaded(), shippedTestSplit());
    return recut;
  }

  it.each(Object.keys(RECUTS) as Recut[])(
    `rule "re-cut invariance" ($0): a share >= ${RECUT_TARGET_SHARE} of ${RECUT_SAMPLE} test conversations move by < ${RECUT_MAX_MOVE}`,
    async (name) => {
      const report = await recutReport();
      expect(report.conversations).toBe(RECUT_SAMPLE);
      const row = report.rows.find((r) => r.recut === name);
      expect(row?.guarded, `re-cut ${name} is not among the eval's guarded rows`).toBe(true);
      if (row === undefined) return;
      expect(
        row.share_stable,
        `re-cut invariance (${name}): share ${row.share_stable.toFixed(3)} of ${row.conversations} conversations moved by < ${RECUT_MAX_MOVE}, rule >= ${RECUT_TARGET_SHARE}; changed by the re-cut ${row.changed}, share among them ${row.share_stable_changed.toFixed(3)}; mean abs move ${row.mean_abs_move.toFixed(3)}`,
      ).toBeGreaterThanOrEqual(RECUT_TARGET_SHARE);
    },
    600_000,
  );
});
