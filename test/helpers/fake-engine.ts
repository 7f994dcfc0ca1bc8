// The operator's container scripts run against test/fixtures/fake-engine/podman (CONTAINER_ENGINE),
// so what they say when the engine, a registry or a container fails is tested on every machine,
// without a container engine. The fake's settings are described in the file itself.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
const FAKE_PODMAN = path.join(ROOT, 'test/fixtures/fake-engine/podman');

export interface FakeEngine {
  /** The environment that points a script at the fake (CONTAINER_ENGINE, FAKE_ENGINE_DIR). */
  env: Record<string, string>;
  /** Each call the scripts made, as one line of arguments. */
  calls(): string[];
  /** The images "on this machine" now. */
  images(): string[];
  cleanup(): void;
}

/** A fake podman with these images on the machine and these FAKE_* settings. */
export function fakeEngine(images: string[] = [], settings: Record<string, string> = {}): FakeEngine {
  const dir = mkdtempSync(path.join(tmpdir(), 'cr-fake-engine-'));
  writeFileSync(path.join(dir, 'images'), images.map((i) => `${i}\n`).join(''));
  const lines = (file: string) => {
    try {
      return readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  return {
    env: { CONTAINER_ENGINE: FAKE_PODMAN, FAKE_ENGINE_DIR: dir, FAKE_NODE: process.execPath, ...settings },
    calls: () => lines('calls'),
    images: () => lines('images'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface ScriptResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a script (a path in the repository, or an absolute one) with the given arguments and extra environment (on top of this
 * process's, without any CONTAINER_* or compose image setting of the machine running the tests).
 */
export function runScript(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
  cwd = ROOT,
): Promise<ScriptResult> {
  const base = { ...process.env };
  for (const name of ['CONTAINER_ENGINE', 'CONTAINER_CLI', 'BASE_IMAGE', 'CONVERSATION_RISK_IMAGE', 'PROMETHEUS_IMAGE', 'REDIS_IMAGE']) {
    delete base[name];
  }
  return new Promise((resolve) => {
    execFile(path.resolve(ROOT, script), args, { cwd, env: { ...base, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
