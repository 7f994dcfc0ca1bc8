// scripts/lib/locked-venv.sh makes the training and fuzzing Python environments from their hash-pinned
// locks. Run here with a real python3 on a lock that pins nothing, so an install is a real venv and pip
// run in a few seconds: long enough for two at once to overlap.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/app.ts';

const SCRIPT = path.join(REPO_ROOT, 'scripts/lib/locked-venv.sh');
const INSTALLING = /locked-venv\.sh: installing/g;

let work: string;
beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), 'cr-venv-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

function lockedVenv(lock: string, venv: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [SCRIPT, lock, venv], { env: { PATH: process.env.PATH ?? '', HOME: work } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('Python environments from hash-pinned locks (scripts/lib/locked-venv.sh)', () => {
  it('installs once when two runs start together: the second waits for the first and takes its environment', async () => {
    const lock = path.join(work, 'empty.lock');
    const venv = path.join(work, '.venv');
    writeFileSync(lock, '# pins nothing\n');
    const runs = await Promise.all([lockedVenv(lock, venv), lockedVenv(lock, venv)]);
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.trim()).toBe(path.join(venv, 'bin/python'));
    }
    expect(runs.map((r) => r.stderr).join('').match(INSTALLING)).toHaveLength(1);
  }, 120_000);

  it('reuses a made environment without installing, and remakes it when the lock changes', async () => {
    const lock = path.join(work, 'x.lock');
    const venv = path.join(work, '.venv-x');
    writeFileSync(lock, '# pins nothing\n');
    expect((await lockedVenv(lock, venv)).stderr).toMatch(INSTALLING);
    const again = await lockedVenv(lock, venv);
    expect(again.code).toBe(0);
    expect(again.stderr).not.toMatch(INSTALLING);
    writeFileSync(lock, '# pins nothing, differently\n');
    const changed = await lockedVenv(lock, venv);
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stderr).toMatch(INSTALLING);
  }, 120_000);
});
