// What a training run's member was trained with (train.py's training.json under the work directory),
// and the shipped recipe's settings (scripts/train/recipes).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function memberHyperparameters(workDir: string, seed: number): Record<string, unknown> {
  return (JSON.parse(readFileSync(join(workDir, 'members', `seed-${seed}`, 'training.json'), 'utf8')) as { hyperparameters: Record<string, unknown> }).hyperparameters;
}

export { shippedRecipe } from '../../scripts/train/recipe.ts';
