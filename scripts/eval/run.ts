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
//
// This file only orders the steps. What is measured: measures.ts (headline, families, ages, length,
// probes, throughput), guards.ts (the shortcut guards, one module each), early.ts, contact-proxies.ts,
// written-excerpts.ts, invariance.ts; all score through harness.ts. The report: report.ts. Publishing: publish.ts.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { parseArgs } from 'node:util';
import { createScorer, type EngineScorer } from '../../src/scoring/scorer.ts';
import type { ModelManifest } from '../../src/scoring/types.ts';
import { SHIPPED_CORPUS, SHIPPED_SLICES, buildCorpus } from '../data/corpus.ts';
import { DEFAULT_DATA_DIR, REAL_SOURCES } from '../data/real.ts';
import { toRequest } from '../data/export.ts';
import { parseJsonl, type LabeledConversation } from '../data/record.ts';
import { TRAINING_PYTHON } from '../train/python.ts';
import { contactProxyRecords, evaluateContactProxies, evaluatePeerBand } from './contact-proxies.ts';
import { earlyDetection } from './early.ts';
import { runGuards } from './guards.ts';
import { scoreInBatches } from './harness.ts';
import { INVARIANCE_PROBES, paddingInvarianceGap } from './invariance.ts';
import { agesWithAndWithout, byLengthWithoutAges, familyRows, handwrittenProbes, headline, throughput } from './measures.ts';
import { WRITTEN_SETS, evaluateWrittenExcerpts, type WrittenReport } from './written-excerpts.ts';
import { SHIPPED_MODEL_DIR, corpusMismatch, publish, publishesFigures, splitSizes, type PublishOptions } from './publish.ts';
import { buildReport, reportMarkdown, type Report } from './report.ts';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

function options() {
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
  return values;
}

/** The corpus file, or, where there is none, the shipped corpus built afresh (`seed` and `n` as given). */
function loadCorpus(path: string, seed: number, n: number): LabeledConversation[] {
  return existsSync(path)
    ? parseJsonl<LabeledConversation>(readFileSync(path, 'utf8'))
    : buildCorpus({ seed, n, real: true, synthetic: true, dataDir: DEFAULT_DATA_DIR, jsonl: [], ...SHIPPED_SLICES });
}

/** What plots.py draws: the test split's labels and scores, and which of its chats are real benign ones. */
interface TestScores {
  labels: number[];
  scores: number[];
  real: number[];
}

/** Every measure, in the order the scorer has always been called in, put together as the report. */
async function evaluate(scorer: EngineScorer, modelDir: string, corpus: readonly LabeledConversation[], quick: boolean): Promise<{ report: Report; test: TestScores }> {
  const test = corpus.filter((r) => r.split === 'test');
  const preds = await scoreInBatches(scorer, test.map(toRequest));
  const scores = preds.map((p) => p.harmful_score);
  const head = await headline(scorer, test, preds, corpus.filter((r) => r.split === 'val'));
  const families = familyRows(test, scores);
  const ages = quick ? undefined : await agesWithAndWithout(scorer, test, scores);
  const byLength = await byLengthWithoutAges(scorer, test);
  const probes = await handwrittenProbes(scorer);
  const invarianceGap = await paddingInvarianceGap(modelDir, INVARIANCE_PROBES);
  const guards = await runGuards({ scorer, train: corpus.filter((r) => r.split === 'train'), test, testPreds: preds, probePreds: probes.preds });
  const early = await earlyDetection(scorer, test, REAL_SOURCES);
  const contactRecords = contactProxyRecords();
  const contact = await evaluateContactProxies(scorer, contactRecords);
  const peers = await evaluatePeerBand(scorer, contactRecords);
  const written: WrittenReport[] = [];
  for (const set of WRITTEN_SETS) written.push(await evaluateWrittenExcerpts(scorer, set));
  // Throughput through the same in-process path (2 workers).
  const perSecond = quick ? undefined : await throughput(scorer);
  const manifest = scorer.manifest as ModelManifest;
  const report = buildReport({ manifest, test, headline: head, perSecond, probes: probes.rows, invarianceGap, guards, early, contact, peers, written, families, ages, byLength });
  return { report, test: { labels: test.map((r) => r.label), scores, real: head.real } };
}

/** roc.png, reliability.png and score_hist.png from the test scores (plots.py, in the training Python). */
function writePlots(outDir: string, report: Report, test: TestScores): void {
  const scoresPath = join(outDir, 'scores.json');
  writeFileSync(scoresPath, JSON.stringify({ ...test, reliability: report.reliability }));
  execFileSync(TRAINING_PYTHON, [join(ROOT, 'scripts/eval/plots.py'), scoresPath, outDir], { stdio: 'inherit' });
}

async function main(): Promise<void> {
  const values = options();
  const modelDir = resolve(values.model);
  const outDir = resolve(values.out);
  mkdirSync(outDir, { recursive: true });
  const corpusPath = values.corpus ?? join(ROOT, '.tmp/train/corpus.jsonl');
  const corpus = loadCorpus(corpusPath, Number(values.seed), Number(values.n));
  const publishing: PublishOptions = { modelDir, manifest: !values['no-manifest'], card: !values['no-card'] };
  const mismatch = corpusMismatch(JSON.parse(readFileSync(join(modelDir, 'manifest.json'), 'utf8')) as ModelManifest, splitSizes(corpus));
  if (mismatch !== undefined) {
    const what = `${existsSync(corpusPath) ? corpusPath : "the shipped recipe's corpus, built afresh,"} is not ${modelDir}'s training corpus: ${mismatch}`;
    // Figures written into a package's manifest or the model card must be that package's own.
    if (publishesFigures(publishing)) throw new Error(`${what}. Pass --corpus with the corpus npm run train wrote for it, or --no-manifest --no-card to compare models on one test split.`);
    console.error(`eval: ${what}; the test split's figures stand, the structure baseline and validation ECE are not the model's own.`);
  }

  const scorer = await createScorer({ modelDir, workers: 2, intraOpThreads: 1, maxQueue: 10_000, timeoutMs: 600_000 });
  if (!scorer.ready) throw new Error(`model did not load: ${scorer.loadError}`);
  try {
    const { report, test } = await evaluate(scorer, modelDir, corpus, values.quick);
    const markdown = reportMarkdown(report);
    writeFileSync(join(outDir, 'eval.json'), JSON.stringify(report, null, 2) + '\n');
    writeFileSync(join(outDir, 'eval.md'), markdown);
    if (!values['no-plots']) writePlots(outDir, report, test);
    publish(report.metrics, markdown, publishing);
    console.log(JSON.stringify(report.metrics, null, 2));
  } finally {
    await scorer.close();
  }
}

await main();
