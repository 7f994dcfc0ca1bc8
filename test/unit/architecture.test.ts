// The house's one-way imports, as the README's Architecture section draws them: each layer imports
// only the layers below it, so a reader can find a rule by its folder and nothing climbs back up.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Each file's imports inside src/, as paths relative to src/. */
const imports: Array<{ file: string; target: string }> = sources(SRC).flatMap((path) => {
  const text = readFileSync(path, 'utf8');
  return [...text.matchAll(/^(?:import|export)[^'"]*from '(\.[^']+)'/gm)].map((m) => ({
    file: relative(SRC, path),
    target: relative(SRC, resolve(dirname(path), m[1] as string)),
  }));
});

/** The layers from the top down; a file may import its own layer and any below it. */
const LAYERS: Array<[string, (path: string) => boolean]> = [
  ['entry', (p) => p === 'main.ts' || p === 'serve.ts' || p === 'app.ts'],
  ['routes', (p) => p.startsWith('routes/')],
  ['http', (p) => p.startsWith('http/')],
  ['config', (p) => p === 'config.ts'],
  ['jobs', (p) => p.startsWith('jobs/')],
  ['webhooks', (p) => p.startsWith('webhooks/')],
  ['ops', (p) => p.startsWith('ops/')],
  ['scoring', (p) => p.startsWith('scoring/')],
  ['catalogue', (p) => p === 'error-catalogue.ts'],
];
const layerOf = (path: string): number => LAYERS.findIndex(([, is]) => is(path));

describe('imports run one way', () => {
  it('every file of src/ belongs to a layer', () => {
    expect(sources(SRC).map((p) => relative(SRC, p)).filter((p) => layerOf(p) < 0 && !p.startsWith('console/'))).toEqual([]);
  });

  it('no file imports a layer above its own (config.ts may read the two leaf parsers below it)', () => {
    const leafParsers = new Set(['webhooks/settings.ts', 'jobs/redis/sealing.ts']);
    const upward = imports
      .filter(({ file, target }) => layerOf(target) < layerOf(file))
      .filter(({ file, target }) => !(file === 'config.ts' && leafParsers.has(target)))
      .map(({ file, target }) => `${file} -> ${target}`);
    expect(upward).toEqual([]);
  });

  it("jobs' wings import the core and never each other; the core imports neither wing", () => {
    const crossing = imports
      .filter(({ file }) => file.startsWith('jobs/'))
      .filter(({ file, target }) => {
        const wing = (p: string) => (p.startsWith('jobs/memory/') ? 'memory' : p.startsWith('jobs/redis/') ? 'redis' : p.startsWith('jobs/') ? 'core' : 'outside');
        const [from, to] = [wing(file), wing(target)];
        return (from === 'core' && (to === 'memory' || to === 'redis')) || (from !== to && from !== 'core' && to !== 'core' && to !== 'outside');
      })
      .map(({ file, target }) => `${file} -> ${target}`);
    expect(crossing).toEqual([]);
  });

  it('the parsers config.ts reads import nothing but the engine\'s types, so config.ts stays below http', () => {
    const reads = imports.filter(({ file }) => file === 'webhooks/settings.ts' || file === 'jobs/redis/sealing.ts');
    expect(reads.filter(({ target }) => target !== 'scoring/types.ts')).toEqual([]);
  });
});
