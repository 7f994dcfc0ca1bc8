// train.sh names a model after the released recipe it trains, and refuses to give a released name to
// anything else, before any work: a package labelled 3.5.0 must be 3.5.0's recipe.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'train-version-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * train.sh with `args`; PYTHON=/bin/false stops it at its first real step (exit 3, "lacks torch"),
 * which it reaches only once the options and the version are settled.
 */
function trainSh(args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync('bash', ['scripts/train/train.sh', '--out', join(dir, 'out'), '--work', join(dir, 'work'), ...args], {
    env: { ...process.env, PYTHON: '/bin/false' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stderr: r.stderr };
}

describe('train.sh: versions', () => {
  it.each([
    ['--view-rate', '0.8'],
    ['--view-merge-rate', '0.3'],
    ['--vocab', 'wordpiece'],
    ['--data', 'mine.jsonl'],
    ['--thin-share', '0.15'],
    ['--epochs', '3'],
    ['--member-args', '2:--view-rate 0.8'],
  ])('refuses %s without --version, naming the option', (option, value) => {
    const r = trainSh([option, value]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${option} trains a model of its own; name it with --version`);
  });

  it('refuses a mix of the released slices that no release has', () => {
    const r = trainSh(['--errands', '700']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/no released model has 2 network\(s\), 700 errand/);
  });

  it.each([[[]], [['--errands', '0']], [['--errands', '0', '--members', '1']], [['--vocab', 'wordpiece', '--version', 'x']]])(
    'goes on with a released recipe or a named one (%j)',
    (args) => {
      const r = trainSh(args);
      expect(r.stderr).toContain('lacks torch or onnx');
      expect(r.status).toBe(3);
    },
  );
});
