// What a training run's member was trained with (train.py's training.json under the work directory),
// and the shipped recipe's settings (scripts/train/recipes).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function memberHyperparameters(workDir: string, seed: number): Record<string, unknown> {
  return (JSON.parse(readFileSync(join(workDir, 'members', `seed-${seed}`, 'training.json'), 'utf8')) as { hyperparameters: Record<string, unknown> }).hyperparameters;
}

/** The shipped recipe: its name (recipes/SHIPPED) and its settings, KEY=value as its file writes them (a recipe sets every setting). */
export function shippedRecipe(): { version: string; settings: Array<[string, string]> } {
  const recipes = new URL('../../scripts/train/recipes/', import.meta.url);
  const version = readFileSync(new URL('SHIPPED', recipes), 'utf8').trim();
  const text = readFileSync(new URL(`${version}.env`, recipes), 'utf8');
  return { version, settings: [...text.matchAll(/^([A-Z_]+)=(.*)$/gm)].map(([, key, value]) => [key as string, value as string]) };
}
