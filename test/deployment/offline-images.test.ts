// Offline builds and compose runs: where a pull fails (no registry, as on an air-gapped site), the
// operator's scripts name the variable that points at an image this machine can get (BASE_IMAGE for
// the build; CONVERSATION_RISK_IMAGE, PROMETHEUS_IMAGE and REDIS_IMAGE for compose) instead of
// leaving the registry's raw error. Runs on every machine, against the fake engine.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeEngine, ROOT, runScript, type FakeEngine } from '../helpers/fake-engine.ts';

// What Podman says when no registry can be reached (measured on this project's CI machine).
const NO_REGISTRY = (image: string) =>
  `Error: initializing source docker://${image}: pinging container registry registry-1.docker.io: ` +
  'Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 10.255.255.53:53: no such host';

const composeDefault = (variable: string): string => {
  const m = new RegExp(`\\$\\{${variable}:-([^}]+)\\}`).exec(readFileSync(path.join(ROOT, 'compose/compose.yaml'), 'utf8'));
  if (!m?.[1]) throw new Error(`compose.yaml has no default for ${variable}`);
  return m[1];
};
const DOCKERFILE_BASE = /^ARG BASE_IMAGE=(.+)$/m.exec(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))?.[1] ?? '';

let engines: FakeEngine[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const e of engines) e.cleanup();
  engines = [];
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function engine(images: string[], settings: Record<string, string> = {}): FakeEngine {
  const e = fakeEngine(images, settings);
  engines.push(e);
  return e;
}

describe('build-image.sh without a registry', () => {
  it('stops before the build with a message naming BASE_IMAGE when the base cannot be pulled', async () => {
    expect(DOCKERFILE_BASE).toBe('node:24-bookworm-slim');
    // The build would fail on the same pull, with only the registry's error.
    const e = engine([], { FAKE_PULL_ERROR: NO_REGISTRY('node:24-bookworm-slim'), FAKE_BUILD_ERROR: NO_REGISTRY('node:24-bookworm-slim') });
    const r = await runScript('scripts/container/build-image.sh', ['localhost/cr:offline'], e.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ERROR: could not pull the base image node:24-bookworm-slim \(Error: initializing source .*no such host\)\.$/m);
    expect(r.stderr).toMatch(/^Set BASE_IMAGE to a Node 24 Debian image/m);
    expect(r.stderr).toContain('BASE_IMAGE=localhost/node24-bookworm-base scripts/container/build-image.sh');
    expect(e.calls().some((c) => c.startsWith('build'))).toBe(false);
  });

  it('names the BASE_IMAGE that was set when that one cannot be pulled', async () => {
    const e = engine([], { FAKE_PULL_ERROR: NO_REGISTRY('mirror.internal/node:24') });
    const r = await runScript('scripts/container/build-image.sh', ['localhost/cr:offline'], { ...e.env, BASE_IMAGE: 'mirror.internal/node:24' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('could not pull the base image mirror.internal/node:24');
  });

  it('builds on a BASE_IMAGE that is on this machine without pulling anything', async () => {
    const base = 'localhost/node24-bookworm-base';
    const e = engine([base], { FAKE_PULL_ERROR: NO_REGISTRY(base) });
    const r = await runScript('scripts/container/build-image.sh', ['localhost/cr:offline'], { ...e.env, BASE_IMAGE: base });
    expect(r.stderr).not.toContain('ERROR');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^built localhost\/cr:offline with .*podman in \d+ s: 323 MB/m);
    expect(e.calls().some((c) => c.startsWith('pull'))).toBe(false);
    const build = e.calls().find((c) => c.startsWith('build')) ?? '';
    expect(build).toContain(`--build-arg BASE_IMAGE=${base}`);
    expect(build).toContain('--format docker');
  });

  it('pulls a missing base first when a registry answers, then builds', async () => {
    const e = engine([]);
    const r = await runScript('scripts/container/build-image.sh', ['localhost/cr:online'], e.env);
    expect(r.code).toBe(0);
    const calls = e.calls().map((c) => c.split(' ')[0]);
    expect(calls.indexOf('pull')).toBeGreaterThan(-1);
    expect(calls.indexOf('pull')).toBeLessThan(calls.indexOf('build'));
  });
});

describe('compose/check-images.sh', () => {
  const appliance = composeDefault('CONVERSATION_RISK_IMAGE');
  const prometheus = composeDefault('PROMETHEUS_IMAGE');
  const redis = composeDefault('REDIS_IMAGE');

  it("names each *_IMAGE variable beside the image compose's profiles could not pull", async () => {
    const e = engine([], { FAKE_PULL_ERROR: NO_REGISTRY('x') });
    const r = await runScript('compose/check-images.sh', ['monitoring', 'scale'], e.env);
    expect(r.code).toBe(1);
    for (const [variable, image] of [
      ['CONVERSATION_RISK_IMAGE', appliance],
      ['PROMETHEUS_IMAGE', prometheus],
      ['REDIS_IMAGE', redis],
    ] as const) {
      expect(r.stderr).toContain(`ERROR: could not pull ${image} (Error: initializing source`);
      expect(r.stderr).toMatch(new RegExp(`^  .*set ${variable} to .*: in the shell, or as ${variable}=\\.\\.\\. in `, 'm'));
    }
  });

  it('checks only the appliance image without profiles', async () => {
    const e = engine([], { FAKE_PULL_ERROR: NO_REGISTRY('x') });
    const r = await runScript('compose/check-images.sh', [], e.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONVERSATION_RISK_IMAGE');
    expect(r.stderr).not.toContain('PROMETHEUS_IMAGE');
    expect(r.stderr).not.toContain('REDIS_IMAGE');
  });

  it('reads the variables as compose does (shell, then the env file, then the default) and pulls nothing that is here', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cr-compose-env-'));
    dirs.push(dir);
    const envFile = path.join(dir, '.env');
    writeFileSync(envFile, 'REDIS_IMAGE="mirror.internal/redis:7"\nPROMETHEUS_IMAGE=from-env-file/prometheus:1\n');
    const e = engine([appliance, 'mirror.internal/redis:7', 'mirror.internal/prometheus:v2.53.0'], { FAKE_PULL_ERROR: NO_REGISTRY('x') });
    const r = await runScript('compose/check-images.sh', ['--env-file', envFile, 'monitoring', 'scale'], {
      ...e.env,
      PROMETHEUS_IMAGE: 'mirror.internal/prometheus:v2.53.0',
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`ok: CONVERSATION_RISK_IMAGE=${appliance} is on this machine`);
    expect(r.stdout).toContain('ok: PROMETHEUS_IMAGE=mirror.internal/prometheus:v2.53.0 is on this machine');
    expect(r.stdout).toContain('ok: REDIS_IMAGE=mirror.internal/redis:7 is on this machine');
    expect(e.calls().some((c) => c.startsWith('pull'))).toBe(false);
  });

  it('works in a copy of compose/ with no repository beside it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cr-compose-copy-'));
    dirs.push(dir);
    for (const f of ['check-images.sh', 'compose.yaml']) cpSync(path.join(ROOT, 'compose', f), path.join(dir, f));
    const e = engine([], { FAKE_PULL_ERROR: NO_REGISTRY('x') });
    const r = await runScript(path.join(dir, 'check-images.sh'), ['monitoring'], e.env, dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ERROR: could not pull ${prometheus}`);
    expect(r.stderr).toContain(`PROMETHEUS_IMAGE=... in ${path.join(dir, '.env')}`);
  });

  it('pulls what is missing when a registry answers', async () => {
    const e = engine([appliance]);
    const r = await runScript('compose/check-images.sh', ['scale'], e.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`ok: REDIS_IMAGE=${redis} pulled`);
    expect(e.images()).toContain(redis);
  });
});
