// Evaluates a model package on the held-out test split through the server's own scoring path
// (createScorer: the model-package checks, the shared encoder, onnxruntime, calibration and
// aggregation), then writes reports/eval.{md,json} and PNG plots, copies the key figures into
// the package's manifest.json `metrics` and, for the shipped package, into MODEL_CARD.md.
//
//   npm run eval                                   # models/conversation-risk on the default corpus
//   node scripts/eval/run.ts --model DIR --corpus .tmp/train/corpus.jsonl --out reports
//   node scripts/eval/run.ts --no-card --no-manifest --no-plots --quick --out reports/ablation/x   # cheap ablation run
//
// --quick skips the throughput and age sections. The shortcut guards (guards.ts) always run.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { parseArgs } from 'node:util';
import { createScorer, type EngineScorer } from '../../src/scoring/scorer.ts';
import type { ModelManifest, Prediction, ScoreRequest } from '../../src/scoring/types.ts';
import { SHIPPED_CORPUS, SHIPPED_SLICES, buildCorpus } from '../data/corpus.ts';
import { DEFAULT_DATA_DIR, REAL_SOURCES } from '../data/real.ts';
import { TEST_FAMILIES } from '../data/generate.ts';
import { toRequest } from '../data/export.ts';
import { renderTurns, turnsOf } from '../data/recut.ts';
import { parseJsonl, type LabeledConversation } from '../data/record.ts';
import { INVARIANCE_PROBES, paddingInvarianceGap } from './invariance.ts';
import { PROBES } from './probes.ts';
import { atThreshold, calibrationError, mean, prAuc, rocAuc } from './metrics.ts';
import { guardsMarkdown, runGuards, type GuardsReport } from './guards.ts';
import { hasSpeakerPrefixes, isAttributableHarm } from './slices.ts';
import { TRAINING_PYTHON } from '../train/python.ts';
import { contactMarkdown, contactMetrics, contactProxyRecords, evaluateContactProxies, evaluatePeerBand, type ContactRow, type PeerBandRow } from './contact-proxies.ts';
import { earlyDetection, earlyMarkdown, earlyMetrics, type EarlyReport } from './early.ts';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

async function scoreAll(scorer: EngineScorer, requests: ScoreRequest[]): Promise<Prediction[]> {
  const out: Prediction[] = [];
  for (let i = 0; i < requests.length; i += 100) out.push(...(await scorer.score(requests.slice(i, i + 100))));
  return out;
}

const SHIPPED_MODEL_DIR = join(ROOT, 'models/conversation-risk');

const round = (x: number, d = 4): number => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);

/** The first `k` turns of a conversation, in the API's text form. */
function firstTurns(conversation: string, k: number): string {
  return renderTurns(turnsOf(conversation).slice(0, k));
}

function fortyTurnConversation(i: number): string {
  const lines: string[] = [];
  for (let t = 0; t < 40; t++) {
    lines.push(`user${(t % 2) + 1}: message ${i}-${t} about the weekend plans and whatever else came up at school today`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      model: { type: 'string', default: SHIPPED_MODEL_DIR },
      corpus: { type: 'string' },
      out: { type: 'string', default: join(ROOT, 'reports') },
      seed: { type: 'string', default: String(SHIPPED_CORPUS.seed) },
      n: { type: 'string', default: String(SHIPPED_CORPUS.n) },
      'no-manifest': { type: 'boolean', default: false },
      'no-card': { type: 'boolean', default: false },
      'no-plots': { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
    },
  });
  const modelDir = resolve(values.model);
  const outDir = resolve(values.out);
  mkdirSync(outDir, { recursive: true });
  const corpusPath = values.corpus ?? join(ROOT, '.tmp/train/corpus.jsonl');
  const corpus = existsSync(corpusPath)
    ? parseJsonl<LabeledConversation>(readFileSync(corpusPath, 'utf8'))
    : buildCorpus({ seed: Number(values.seed), n: Number(values.n), real: true, synthetic: true, dataDir: DEFAULT_DATA_DIR, jsonl: [], ...SHIPPED_SLICES });
  const test = corpus.filter((r) => r.split === 'test');

  const scorer = await createScorer({ modelDir, workers: 2, intraOpThreads: 1, maxQueue: 10_000, timeoutMs: 600_000 });
  if (!scorer.ready) throw new Error(`model did not load: ${scorer.loadError}`);
  const manifest = scorer.manifest as ModelManifest;
  try {
    const preds = await scoreAll(scorer, test.map(toRequest));
    const labels = test.map((r) => r.label);
    const scores = preds.map((p) => p.harmful_score);

    const overall = { roc_auc: rocAuc(labels, scores), pr_auc: prAuc(labels, scores), ...atThreshold(labels, scores) };
    const heldOut = test.map((r, i) => ({ r, i })).filter(({ r }) => r.label === 0 || TEST_FAMILIES.includes(r.family));
    const heldOutAuc = rocAuc(heldOut.map(({ r }) => r.label), heldOut.map(({ i }) => scores[i] as number));
    // Attribution leaves flat records out: for flat text the service names nobody by design.
    const harmfulIdx = test
      .map((r, i) => (isAttributableHarm(r) ? i : -1))
      .filter((i) => i >= 0);
    const attribution = mean(harmfulIdx.map((i) => (preds[i]?.predatory_user === test[i]?.predator ? 1 : 0)));
    const flagged = harmfulIdx.filter((i) => (scores[i] as number) > 0.5);
    const attributionFlagged = mean(flagged.map((i) => (preds[i]?.predatory_user === test[i]?.predator ? 1 : 0)));
    const heldOutHarmful = harmfulIdx.filter((i) => TEST_FAMILIES.includes(test[i]?.family ?? ''));
    const attributionHeldOut = mean(heldOutHarmful.map((i) => (preds[i]?.predatory_user === test[i]?.predator ? 1 : 0)));
    const realIdx = test.map((r, i) => (REAL_SOURCES.has(r.source) ? i : -1)).filter((i) => i >= 0);
    const realFpr = mean(realIdx.map((i) => ((scores[i] as number) > 0.5 ? 1 : 0)));
    const cal = calibrationError(labels, scores);
    // The same error on the validation split the calibration was fitted on: the gap between the two
    // shows how far calibration transfers to unseen wording and families.
    const val = corpus.filter((r) => r.split === 'val');
    const valPreds = await scoreAll(scorer, val.map(toRequest));
    const valEce = calibrationError(val.map((r) => r.label), valPreds.map((p) => p.harmful_score)).ece;

    const families: Record<string, { n: number; harmful: number; mean_score: number; flagged: number; held_out: boolean }> = {};
    test.forEach((r, i) => {
      const f = (families[r.family] ??= { n: 0, harmful: r.label, mean_score: 0, flagged: 0, held_out: TEST_FAMILIES.includes(r.family) });
      f.n++;
      f.mean_score += scores[i] as number;
      f.flagged += (scores[i] as number) > 0.5 ? 1 : 0;
    });
    for (const f of Object.values(families)) {
      f.mean_score = round(f.mean_score / f.n);
      f.flagged = round(f.flagged / f.n);
    }

    // Ages: the same conversations with and without the ages they came with (skipped by --quick).
    const withAges = values.quick ? [] : test.map((r, i) => ({ r, i })).filter(({ r }) => r.age_a !== undefined || r.age_b !== undefined);
    const stripped = await scoreAll(scorer, withAges.map(({ r }) => ({ conversation: r.conversation })));
    const ageRows = withAges.map(({ r, i }, k) => ({ label: r.label, with: scores[i] as number, without: stripped[k]?.harmful_score as number }));
    const ages = {
      conversations: ageRows.length,
      roc_auc_with_ages: rocAuc(ageRows.map((a) => a.label), ageRows.map((a) => a.with)),
      roc_auc_without_ages: rocAuc(ageRows.map((a) => a.label), ageRows.map((a) => a.without)),
      mean_score_harmful_with: mean(ageRows.filter((a) => a.label === 1).map((a) => a.with)),
      mean_score_harmful_without: mean(ageRows.filter((a) => a.label === 1).map((a) => a.without)),
      mean_score_benign_with: mean(ageRows.filter((a) => a.label === 0).map((a) => a.with)),
      mean_score_benign_without: mean(ageRows.filter((a) => a.label === 0).map((a) => a.without)),
    };

    // Length: the first k turns of each synthetic test conversation with speaker turns, without ages.
    // Flat records are left out: they are one turn whatever k is, so they would sit in every row whole.
    const synthetic = test.filter((r) => r.source === 'generator' && hasSpeakerPrefixes(r.conversation));
    const byLength: Array<Record<string, number>> = [];
    for (const k of [1, 2, 4, 8, 16, 32]) {
      const reqs = synthetic.map((r) => ({ conversation: firstTurns(r.conversation, k) }));
      const p = await scoreAll(scorer, reqs);
      const s = p.map((x) => x.harmful_score);
      const lab = synthetic.map((r) => r.label);
      byLength.push({
        turns: k,
        mean_score_harmful: round(mean(s.filter((_, i) => lab[i] === 1))),
        mean_score_benign: round(mean(s.filter((_, i) => lab[i] === 0))),
        share_mid_range: round(mean(s.map((x) => (x >= 0.2 && x < 0.8 ? 1 : 0)))),
        roc_auc: round(rocAuc(lab, s)),
      });
    }

    // Hand-written probes that never came from the generator.
    const probePreds = await scorer.score(PROBES.map(({ conversation, age_a, age_b }) => ({ conversation, age_a, age_b })));
    const probes = PROBES.map((p, i) => ({
      name: p.name,
      label: p.label,
      predator: p.predator,
      harmful_score: round(probePreds[i]?.harmful_score ?? Number.NaN, 3),
      predicted_user: probePreds[i]?.predatory_user ?? 'neither',
      correct: ((probePreds[i]?.harmful_score ?? 0) > 0.5 ? 1 : 0) === p.label && (p.label === 0 || probePreds[i]?.predatory_user === p.predator),
    }));
    const invarianceGap = await paddingInvarianceGap(modelDir, INVARIANCE_PROBES);
    const guards = await runGuards({ scorer, train: corpus.filter((r) => r.split === 'train'), test, testPreds: preds, probePreds });
    const early = await earlyDetection(scorer, test, REAL_SOURCES);
    const contactRecords = contactProxyRecords();
    const contact = await evaluateContactProxies(scorer, contactRecords);
    const peers = await evaluatePeerBand(scorer, contactRecords);

    // Throughput through the same in-process path (2 workers): 40-turn conversations, ~2,500 chars (skipped by --quick).
    let perSecond = Number.NaN;
    if (!values.quick) {
      const bench = Array.from({ length: 2000 }, (_, i) => ({ conversation: fortyTurnConversation(i) }));
      await scoreAll(scorer, bench.slice(0, 200));
      const t0 = performance.now();
      await scoreAll(scorer, bench);
      perSecond = bench.length / ((performance.now() - t0) / 1000);
    }

    const report = {
      model: { name: manifest.name, version: manifest.version, calibration: manifest.calibration },
      test_split: {
        conversations: test.length,
        harmful: labels.filter((y) => y === 1).length,
        real_benign: realIdx.length,
        held_out_families: TEST_FAMILIES,
      },
      metrics: {
        roc_auc: round(overall.roc_auc),
        roc_auc_held_out_families: round(heldOutAuc),
        pr_auc: round(overall.pr_auc),
        precision_at_0_5: round(overall.precision),
        recall_at_0_5: round(overall.recall),
        f1_at_0_5: round(overall.f1),
        f05_at_0_5: round(overall.f05),
        attribution_accuracy: round(attribution),
        attribution_accuracy_held_out_families: round(attributionHeldOut),
        attribution_accuracy_flagged_harmful: round(attributionFlagged),
        real_benign_fpr: round(realFpr),
        ece: round(cal.ece),
        ece_validation_split: round(valEce),
        ...(values.quick ? {} : { conversations_per_second_40_turns: Math.round(perSecond) }),
        handwritten_probes_correct: probes.filter((p) => p.correct).length / probes.length,
        padding_invariance_max_abs_diff: invarianceGap,
        ...guards.metrics,
        ...Object.fromEntries(Object.entries(earlyMetrics(early)).map(([k, v]) => [k, round(v)])),
        ...contactMetrics(contact, peers),
      },
      guards,
      early,
      contact,
      peers,
      probes,
      confusion_at_0_5: { tp: overall.tp, fp: overall.fp, tn: overall.tn, fn: overall.fn },
      families,
      ages: values.quick ? {} : Object.fromEntries(Object.entries(ages).map(([k, v]) => [k, round(v)])),
      by_length_without_ages: byLength,
      reliability: cal.bins.map((b) => ({ ...b, meanScore: round(b.meanScore), fractionHarmful: round(b.fractionHarmful) })),
      targets: { roc_auc: 0.97, attribution_accuracy: 0.9, real_benign_fpr: 0.01, ece: 0.05 },
    };
    writeFileSync(join(outDir, 'eval.json'), JSON.stringify(report, null, 2) + '\n');
    writeFileSync(join(outDir, 'eval.md'), markdown(report));

    if (!values['no-plots']) {
      const scoresPath = join(outDir, 'scores.json');
      writeFileSync(scoresPath, JSON.stringify({ labels, scores, real: realIdx, reliability: report.reliability }));
      execFileSync(TRAINING_PYTHON, [join(ROOT, 'scripts/eval/plots.py'), scoresPath, outDir], { stdio: 'inherit' });
    }
    if (!values['no-manifest']) {
      const path = join(modelDir, 'manifest.json');
      const m = JSON.parse(readFileSync(path, 'utf8')) as ModelManifest;
      m.metrics = { split: 'test (held-out families and phrasings, held-out real chats)', ...report.metrics };
      writeFileSync(path, JSON.stringify(m, null, 2) + '\n');
    }
    // MODEL_CARD.md describes the shipped package; another model's figures (npm run train -- --out DIR)
    // stay in its own manifest and report.
    if (!values['no-card'] && modelDir === SHIPPED_MODEL_DIR) updateModelCard(markdown(report));
    else if (!values['no-card']) console.error(`MODEL_CARD.md left as it is: it describes ${SHIPPED_MODEL_DIR}, not ${modelDir}`);
    console.log(JSON.stringify(report.metrics, null, 2));
  } finally {
    await scorer.close();
  }
}

type Report = {
  model: { name: string; version: string; calibration: ModelManifest['calibration'] };
  test_split: Record<string, unknown>;
  metrics: Record<string, number>;
  confusion_at_0_5: Record<string, number>;
  guards: GuardsReport;
  early: EarlyReport;
  contact: ContactRow[];
  peers: PeerBandRow;
  families: Record<string, { n: number; harmful: number; mean_score: number; flagged: number; held_out: boolean }>;
  ages: Record<string, number>;
  by_length_without_ages: Array<Record<string, number>>;
  probes: Array<{ name: string; label: number; predator: string; harmful_score: number; predicted_user: string; correct: boolean }>;
  targets: Record<string, number>;
};

function metricsTable(m: Record<string, number>): string {
  const rows = Object.entries(m).map(([k, v]) => `| ${k} | ${v} |`);
  return ['| metric | value |', '|---|---|', ...rows].join('\n');
}

function markdown(r: Report): string {
  const fam = Object.entries(r.families)
    .sort((a, b) => b[1].harmful - a[1].harmful || a[0].localeCompare(b[0]))
    .map(([name, f]) => `| ${name}${f.held_out ? ' (held out)' : ''} | ${f.harmful ? 'harmful' : 'benign'} | ${f.n} | ${f.mean_score} | ${f.flagged} |`);
  const len = r.by_length_without_ages.map(
    (x) => `| ${x.turns} | ${x.mean_score_harmful} | ${x.mean_score_benign} | ${x.share_mid_range} | ${x.roc_auc} |`,
  );
  return `# Evaluation: ${r.model.name} ${r.model.version}

Held-out test split, scored through the server's path (\`createScorer\`: shared encoder, onnxruntime,
calibration \`T=${round(r.model.calibration.temperature)}\`, \`b=${round(r.model.calibration.bias)}\`, max-over-segments aggregation).
Test split: ${JSON.stringify(r.test_split)}.

## Headline
${metricsTable(r.metrics)}

Targets: ROC-AUC >= ${r.targets.roc_auc}, attribution >= ${r.targets.attribution_accuracy}, real-benign FPR <= ${r.targets.real_benign_fpr}, ECE <= ${r.targets.ece}.
Confusion at 0.5: ${JSON.stringify(r.confusion_at_0_5)}.
Attribution figures leave out flat records (tagged \`flat\`, or with no speaker prefix): for flat text the
service names nobody by design.

${guardsMarkdown(r.guards)}
${earlyMarkdown(r.early)}
${contactMarkdown(r.contact, r.peers)}
## Per family
| family | class | n | mean score | share > 0.5 |
|---|---|---|---|---|
${fam.join('\n')}

## Ages: the same conversations with and without their ages
${Object.keys(r.ages).length === 0 ? '(skipped: --quick)' : metricsTable(r.ages)}

## Length: first k turns of each synthetic test conversation with speaker turns, no ages
The spec warns that very short conversations without ages can score in the mid range. Here short
prefixes carry little evidence: harmful and benign scores converge (ROC-AUC near 0.6 at one turn),
a minority land in the mid range, and separation grows with every added turn.
| turns | mean score harmful | mean score benign | share in [0.2, 0.8) | ROC-AUC |
|---|---|---|---|---|
${len.join('\n')}

## Hand-written probes (not from the generator)
| probe | label | predator | harmful_score | predicted user | correct |
|---|---|---|---|---|---|
${r.probes.map((p) => `| ${p.name} | ${p.label} | ${p.predator} | ${p.harmful_score} | ${p.predicted_user} | ${p.correct ? 'yes' : 'no'} |`).join('\n')}

Plots: roc.png, reliability.png, score_hist.png.
`;
}

function updateModelCard(reportMarkdown: string): void {
  const path = join(ROOT, 'MODEL_CARD.md');
  if (!existsSync(path)) return;
  const text = readFileSync(path, 'utf8');
  const start = '<!-- metrics:start -->';
  const end = '<!-- metrics:end -->';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) return;
  // The report's sections, one heading level down, without its title.
  const body = reportMarkdown.replace(/^# .*\n/, '').replace(/^## /gm, '### ').replace(/\nPlots: .*\n/, '\n');
  writeFileSync(path, text.slice(0, a + start.length) + '\n' + body.trim() + '\n' + text.slice(b));
}

await main();
