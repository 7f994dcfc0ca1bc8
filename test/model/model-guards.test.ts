// Shortcut guards run against the SHIPPED model (models/conversation-risk) through the server's own
// scoring path, with the issue's own targets (issue "The model reads real chats"): every benign short
// chat at or below 0.6, and at least 90 % of conversations moving by less than 0.15 under each re-cut.
// Long benign chats of repeated small talk, with or without one everyday mention of an app, a picture
// or a meeting, are flagged no more often than flattened benign chats may be (the eval's slice, whole).
// Model 1.1.0 broke them outright (a lone `user1: hi` scored 1.0; flattening moved a third of the
// scores by 0.15 or more). This fixed set of 260 conversations is a sample: `npm run eval` measures
// the same rules on 1,500 conversations of the full test split and reports them with PASS/FAIL.
// Each failure prints the measured figure.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScorer, type EngineScorer } from '../../src/scoring/scorer.ts';
import type { ScoreRequest } from '../../src/scoring/types.ts';
import { generate } from '../../scripts/data/generate.ts';
import { DEFAULT_DATA_DIR, loadPersonaChat, loadTopicalChat } from '../../scripts/data/real.ts';
import type { LabeledConversation } from '../../scripts/data/record.ts';
import { RECUTS, type Recut } from '../../scripts/data/recut.ts';
import { RECUT_MAX_MOVE, RECUT_TARGET_SHARE, deterministicSubsample, scoreInBatches } from '../../scripts/eval/recut-invariance.ts';
import { SHORT_TARGETS, shortBenignChats } from '../../scripts/eval/short-chats.ts';
import { LONG_TALK_BENIGN, LONG_TALK_TARGETS, evaluateLongSmallTalk } from '../../scripts/eval/long-small-talk.ts';

const MODEL_DIR = join(import.meta.dirname, '../../models/conversation-risk');
const GENERATED = 200;
const REAL = 60;

/** 200 generated test-split conversations (fixed seed) plus 60 real benign test chats from ../shared/data. */
function guardConversations(): LabeledConversation[] {
  const generated = deterministicSubsample(
    generate({ seed: 11, n: 1500 }).filter((r) => r.split === 'test'),
    GENERATED,
    'model-guards',
  );
  // The real chats are read in place from ../shared/data, as training reads them: the guard's share
  // is counted over all 260, so a missing folder must fail here rather than quietly guard 200.
  if (!existsSync(DEFAULT_DATA_DIR)) throw new Error(`the guard reads 60 real benign chats from ${DEFAULT_DATA_DIR}, which is missing`);
  const real = deterministicSubsample([...loadTopicalChat(), ...loadPersonaChat()].filter((r) => r.split === 'test'), REAL, 'model-guards');
  if (generated.length !== GENERATED || real.length !== REAL) {
    throw new Error(`guard set: ${generated.length} generated and ${real.length} real chats, expected ${GENERATED} and ${REAL}`);
  }
  return [...generated, ...real];
}

const request = (r: LabeledConversation, conversation: string): ScoreRequest => ({ conversation, age_a: r.age_a, age_b: r.age_b });

describe('shipped model: shortcut guards', () => {
  let scorer: EngineScorer;
  let conversations: LabeledConversation[];
  let original: Promise<number[]> | undefined;

  beforeAll(async () => {
    scorer = await createScorer({ modelDir: MODEL_DIR, workers: 1, intraOpThreads: 1, maxQueue: 10_000, timeoutMs: 120_000 });
    conversations = guardConversations();
  });
  afterAll(async () => {
    await scorer?.close();
  });

  /** Scores, failing with the load error when the shipped package does not load. */
  async function scores(requests: readonly ScoreRequest[]): Promise<number[]> {
    if (!scorer.ready) throw new Error(`the shipped model at models/conversation-risk did not load, so no guard can pass: ${scorer.loadError}`);
    return (await scoreInBatches(scorer, requests)).map((p) => p.harmful_score);
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
    if (!scorer.ready) throw new Error(`the shipped model at models/conversation-risk did not load, so no guard can pass: ${scorer.loadError}`);
    const rows = await evaluateLongSmallTalk(scorer, LONG_TALK_BENIGN);
    const over = rows.filter((r) => r.flagged > LONG_TALK_TARGETS.benign_flagged_max);
    expect(
      over.map((r) => `${r.variant}, ${r.rendering}: ${r.flagged.toFixed(3)} of ${r.chats} flagged, max ${r.max_score.toFixed(3)}`),
      `long repeated small talk: ${rows.map((r) => `${r.variant}, ${r.rendering} ${r.flagged.toFixed(3)}`).join('; ')}`,
    ).toEqual([]);
    expect(rows).toHaveLength(4);
  });

  it.each(Object.keys(RECUTS) as Recut[])(
    `rule "re-cut invariance" ($0): a share >= ${RECUT_TARGET_SHARE} of conversations move by < ${RECUT_MAX_MOVE}`,
    async (recut) => {
      original ??= scores(conversations.map((r) => request(r, r.conversation)));
      const before = await original;
      const after = await scores(conversations.map((r) => request(r, RECUTS[recut](r.conversation))));
      const moves = after.map((s, i) => Math.abs(s - (before[i] as number)));
      const stable = moves.filter((m) => m < RECUT_MAX_MOVE).length;
      const share = stable / moves.length;
      const meanMove = moves.reduce((a, b) => a + b, 0) / moves.length;
      expect(
        share,
        `re-cut invariance (${recut}): ${stable} of ${moves.length} conversations (share ${share.toFixed(3)}) moved by < ${RECUT_MAX_MOVE}, rule >= ${RECUT_TARGET_SHARE}; mean abs move ${meanMove.toFixed(3)}`,
      ).toBeGreaterThanOrEqual(RECUT_TARGET_SHARE);
    },
  );
});
