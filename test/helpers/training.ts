// What a training run's member was trained with (train.py's training.json under the work directory),
// the shipped recipe's settings (scripts/train/recipes), and Python snippets run against scripts/train.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';

export function memberHyperparameters(workDir: string, seed: number): Record<string, unknown> {
  return (JSON.parse(readFileSync(join(workDir, 'members', `seed-${seed}`, 'training.json'), 'utf8')) as { hyperparameters: Record<string, unknown> }).hyperparameters;
}

export { shippedRecipe } from '../../scripts/train/recipe.ts';

/** Whether the training interpreter (scripts/train/python.ts) has PyTorch: training tests skip without it. */
export const hasTorch = spawnSync(TRAINING_PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;

/**
 * Runs a Python snippet with scripts/train on the path (json, sys and torch imported) and returns its last line as JSON.
 * `timeoutMs` kills a snippet that hangs: the call blocks, so vitest's own timeout cannot fire while it runs.
 */
export function trainingPython<T>(body: string, timeoutMs?: number): T {
  const out = execFileSync(TRAINING_PYTHON, ['-W', 'ignore', '-c', `import json, sys, torch\nsys.path.insert(0, 'scripts/train')\n${body}`], { encoding: 'utf8', timeout: timeoutMs });
  return JSON.parse(out.trim().split('\n').at(-1) as string) as T;
}
