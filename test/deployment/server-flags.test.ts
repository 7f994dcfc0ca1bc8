// The V8 memory flags are set in three places that must agree: `npm start`, the image's CMD and the
// bench (which measures the server as those two start it). README "Memory" says why each is there.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/app.ts';

const FLAGS = ['--max-semi-space-size=2', '--heap-growing-percent=20'];
const read = (path: string): string => readFileSync(join(REPO_ROOT, path), 'utf8');

describe('the server is started with the same V8 memory flags everywhere', () => {
  it('npm start', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start ?? '';
    expect(/node (.*) src\/main\.ts$/.exec(start)?.[1]?.split(' ')).toEqual(FLAGS);
    expect(start).toMatch(/^MALLOC_ARENA_MAX=\$\{MALLOC_ARENA_MAX:-2\} /);
  });

  it("the image's CMD", () => {
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
    expect(JSON.parse(cmd ?? '[]')).toEqual(['node', ...FLAGS, 'src/main.ts']);
    expect(read('Dockerfile')).toMatch(/^\s+MALLOC_ARENA_MAX=2 \\$/m);
  });

  it('the bench', () => {
    const args = /spawn\(process\.execPath, (\[[^\]]*\])/.exec(read('scripts/bench/run.ts'))?.[1];
    expect(JSON.parse((args ?? '[]').replace(/'/g, '"'))).toEqual([...FLAGS, 'src/main.ts']);
    expect(read('scripts/bench/run.ts')).toMatch(/MALLOC_ARENA_MAX: '2'/);
  });
});
