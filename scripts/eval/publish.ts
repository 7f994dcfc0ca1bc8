// Publishing an evaluation, the step after run.ts has written reports/eval.{md,json}: the report's
// headline figures go into the model package's manifest.json `metrics`, and, for the shipped package
// only, the report's sections into MODEL_CARD.md between its metrics markers. Another model's figures
// (npm run train -- --out DIR) stay in its own manifest and report.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ModelManifest } from '../../src/scoring/types.ts';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
/** The package MODEL_CARD.md describes, and `npm run eval` evaluates by default. */
export const SHIPPED_MODEL_DIR = join(ROOT, 'models/conversation-risk');
const MODEL_CARD = join(ROOT, 'MODEL_CARD.md');

export interface PublishOptions {
  modelDir: string;
  /** Write the figures into the package's manifest.json. */
  manifest: boolean;
  /** Write the report into MODEL_CARD.md (only when modelDir is the shipped package). */
  card: boolean;
}

/** Whether the card is written: asked for, and the package is the one it describes. */
const writesCard = (o: PublishOptions): boolean => o.card && o.modelDir === SHIPPED_MODEL_DIR;

/** Whether publish() with these options writes any figures: into the package's manifest or the model card. */
export function publishesFigures(o: PublishOptions): boolean {
  return o.manifest || writesCard(o);
}

/** `metrics`: the report's headline figures; `reportMarkdown`: eval.md as written. */
export function publish(metrics: Record<string, number>, reportMarkdown: string, o: PublishOptions): void {
  if (o.manifest) writeManifestMetrics(o.modelDir, metrics);
  if (writesCard(o)) updateModelCard(reportMarkdown);
  else if (o.card) console.error(`MODEL_CARD.md left as it is: it describes ${SHIPPED_MODEL_DIR}, not ${o.modelDir}`);
}

/** How many conversations of each split a corpus holds. */
export function splitSizes(corpus: readonly { split: string }[]): { train: number; val: number } {
  return { train: corpus.filter((r) => r.split === 'train').length, val: corpus.filter((r) => r.split === 'val').length };
}

/**
 * Why `sizes` (a corpus's train and validation splits) cannot be the corpus the package was trained
 * on, or undefined where they match what its manifest records (`training_data.conversations_used`) or
 * the manifest records nothing. The test split cannot tell: releases that add training slices share
 * one test split, so another release's corpus (a stale `.tmp/train`) scores the test split alike while
 * the figures read from the training splits (the structure baseline, the validation ECE) are not the
 * package's own.
 */
export function corpusMismatch(manifest: Pick<ModelManifest, 'training_data'>, sizes: { train: number; val: number }): string | undefined {
  const used = manifest.training_data?.['conversations_used'] as { train?: unknown; val?: unknown } | undefined;
  if (typeof used?.train !== 'number' || typeof used.val !== 'number') return undefined;
  if (used.train === sizes.train && used.val === sizes.val) return undefined;
  return `the corpus's train / validation splits hold ${sizes.train} / ${sizes.val} conversations, the model was trained on ${used.train} / ${used.val}`;
}

/** The package's manifest.json with `metrics` replaced by these figures, labelled with the split they come from. */
export function writeManifestMetrics(modelDir: string, metrics: Record<string, number>): void {
  const path = join(modelDir, 'manifest.json');
  const m = JSON.parse(readFileSync(path, 'utf8')) as ModelManifest;
  m.metrics = { split: 'test (held-out families and phrasings, held-out real chats)', ...metrics };
  writeFileSync(path, JSON.stringify(m, null, 2) + '\n');
}

/** MODEL_CARD.md with the report's sections between its metrics markers; left alone without the file or the markers. */
export function updateModelCard(reportMarkdown: string): void {
  if (!existsSync(MODEL_CARD)) return;
  const text = readFileSync(MODEL_CARD, 'utf8');
  const start = '<!-- metrics:start -->';
  const end = '<!-- metrics:end -->';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) return;
  // The report's sections, one heading level down, without its title.
  const body = reportMarkdown.replace(/^# .*\n/, '').replace(/^## /gm, '### ').replace(/\nPlots: .*\n/, '\n');
  writeFileSync(MODEL_CARD, text.slice(0, a + start.length) + '\n' + body.trim() + '\n' + text.slice(b));
}
