// The test run's own housekeeping: what its tests write under os.tmpdir() is gone when the run ends.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import setup, { SCRATCH_PREFIX } from './scratch-dir.ts';

describe('the test run scratch directory (globalSetup)', () => {
  const outer = process.env.TMPDIR;
  afterEach(() => {
    process.env.TMPDIR = outer;
  });

  it('this run writes under a scratch directory of its own', () => {
    expect(basename(tmpdir()).startsWith(SCRATCH_PREFIX)).toBe(true);
  });

  it('the teardown removes everything written there and gives TMPDIR back', () => {
    const teardown = setup();
    const dir = tmpdir();
    expect(dir).not.toBe(outer);
    expect(dirname(dir)).toBe(outer);
    mkdirSync(join(dir, 'nested', 'deeper'), { recursive: true });
    writeFileSync(join(dir, 'nested', 'deeper', 'body.json'), 'x'.repeat(1024));
    teardown();
    expect(existsSync(dir)).toBe(false);
    expect(process.env.TMPDIR).toBe(outer);
  });
});
