// The evaluation report: what run.ts measured, put together as eval.json (buildReport) and rendered
// as eval.md (reportMarkdown), whose sections publish.ts also copies into MODEL_CARD.md.

import type { ModelManifest } from '../../src/scoring/types.ts';
import { TEST_FAMILIES } from '../data/generate.ts';
import type { LabeledConversation } from '../data/record.ts';
import { contactMarkdown, contactMetrics, type PeerBandRow } from './contact-proxies.ts';
import type { ProxyRow } from './proxy-rows.ts';
import { earlyMarkdown, earlyMetrics, type EarlyReport } from './early.ts';
import { round } from './guard.ts';
import { guardsMarkdown, type GuardsReport } from './guards.ts';
import type { FamilyFigures, Headline, ProbeRow } from './measures.ts';
import type { ReliabilityBin } from './metrics.ts';
import { writtenMarkdown, writtenMetrics, type WrittenReport } from './written-excerpts.ts';

/** The headline targets the report states under its table. */
export const HEADLINE_TARGETS = { roc_auc: 0.97, attribution_accuracy: 0.9, real_benign_fpr: 0.01, ece: 0.05 };

export interface Report {
  model: { name: string; version: string; calibration: ModelManifest['calibration'] };
  test_split: Record<string, unknown>;
  metrics: Record<string, number>;
  guards: GuardsReport;
  early: EarlyReport;
  contact: ProxyRow[];
  peers: PeerBandRow;
  written: WrittenReport[];
  probes: ProbeRow[];
  confusion_at_0_5: Record<string, number>;
  families: Record<string, FamilyFigures>;
  /** Empty when skipped (--quick). */
  ages: Record<string, number>;
  by_length_without_ages: Array<Record<string, number>>;
  reliability: ReliabilityBin[];
  targets: Record<string, number>;
}

/** Everything run.ts measured, for buildReport. */
export interface Measured {
  manifest: ModelManifest;
  test: readonly LabeledConversation[];
  headline: Headline;
  /** Conversations per second; undefined when skipped (--quick). */
  perSecond: number | undefined;
  probes: ProbeRow[];
  invarianceGap: number;
  guards: GuardsReport;
  early: EarlyReport;
  contact: ProxyRow[];
  peers: PeerBandRow;
  written: WrittenReport[];
  families: Record<string, FamilyFigures>;
  /** undefined when skipped (--quick). */
  ages: Record<string, number> | undefined;
  byLength: Array<Record<string, number>>;
}

/** eval.json: the figures in report.metrics (and so in the manifest and the card), then each view's detail. */
export function buildReport(m: Measured): Report {
  const h = m.headline;
  const o = h.overall;
  return {
    model: { name: m.manifest.name, version: m.manifest.version, calibration: m.manifest.calibration },
    test_split: {
      conversations: m.test.length,
      harmful: m.test.filter((r) => r.label === 1).length,
      real_benign: h.real.length,
      held_out_families: TEST_FAMILIES,
    },
    metrics: {
      roc_auc: round(o.roc_auc),
      roc_auc_held_out_families: round(h.held_out_auc),
      pr_auc: round(o.pr_auc),
      precision_at_0_5: round(o.precision),
      recall_at_0_5: round(o.recall),
      f1_at_0_5: round(o.f1),
      f05_at_0_5: round(o.f05),
      attribution_accuracy: round(h.attribution),
      attribution_accuracy_held_out_families: round(h.attribution_held_out),
      attribution_accuracy_flagged_harmful: round(h.attribution_flagged),
      real_benign_fpr: round(h.real_fpr),
      ece: round(h.calibration.ece),
      ece_validation_split: round(h.val_ece),
      ...(m.perSecond === undefined ? {} : { conversations_per_second_40_turns: Math.round(m.perSecond) }),
      handwritten_probes_correct: m.probes.filter((p) => p.correct).length / m.probes.length,
      padding_invariance_max_abs_diff: m.invarianceGap,
      ...m.guards.metrics,
      ...Object.fromEntries(Object.entries(earlyMetrics(m.early)).map(([k, v]) => [k, round(v)])),
      ...contactMetrics(m.contact, m.peers),
      ...writtenMetrics(m.written),
    },
    guards: m.guards,
    early: m.early,
    contact: m.contact,
    peers: m.peers,
    written: m.written,
    probes: m.probes,
    confusion_at_0_5: { tp: o.tp, fp: o.fp, tn: o.tn, fn: o.fn },
    families: m.families,
    ages: m.ages ?? {},
    by_length_without_ages: m.byLength,
    reliability: h.calibration.bins.map((b) => ({ ...b, meanScore: round(b.meanScore), fractionHarmful: round(b.fractionHarmful) })),
    targets: HEADLINE_TARGETS,
  };
}

function metricsTable(m: Record<string, number>): string {
  const rows = Object.entries(m).map(([k, v]) => `| ${k} | ${v} |`);
  return ['| metric | value |', '|---|---|', ...rows].join('\n');
}

/** eval.md. */
export function reportMarkdown(r: Report): string {
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
${writtenMarkdown(r.written)}
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
