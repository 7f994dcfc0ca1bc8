// The shipped model's recipe (recipes/SHIPPED names its file): read by the eval's fallback corpus
// (scripts/data/corpus.ts), by package.ts's default version and by the tests, so no copy of it is kept.
import { readFileSync } from 'node:fs';

const RECIPES = new URL('recipes/', import.meta.url);

/** The shipped recipe's name, as recipes/SHIPPED writes it. */
export function shippedVersion(): string {
  return readFileSync(new URL('SHIPPED', RECIPES), 'utf8').trim();
}

/** The shipped recipe: its name and its settings, KEY=value as its file writes them (a recipe sets every setting). */
export function shippedRecipe(): { version: string; settings: Array<[string, string]> } {
  const version = shippedVersion();
  const text = readFileSync(new URL(`${version}.env`, RECIPES), 'utf8');
  return { version, settings: [...text.matchAll(/^([A-Z_]+)=(.*)$/gm)].map(([, key, value]) => [key as string, value as string]) };
}
