// scripts/container/verify-release.sh tells a release that does not match what was published (exit 1,
// "FAIL") from a check that could not run at all (exit 3, "ERROR: could not ..."): an engine that
// does not answer, an archive that does not load, an image that is not there or a container that
// cannot start says nothing about tampering. Runs on every machine, against the fake engine, which
// runs the script's real model check with this Node on a model directory of the test's making.
// (container-image.test.ts runs the script on real images where Podman is set up.)
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeEngine, ROOT, runScript, type FakeEngine } from '../helpers/fake-engine.ts';

const SCRIPT = 'scripts/container/verify-release.sh';
const IMAGE = 'localhost/conversation-risk:1.2.3';
const FIXTURE_MODEL = path.join(ROOT, 'test/fixtures/contract-model');
// What Podman says when the sandbox cannot raise the container's open-files limit (the
// `default_ulimits` case of docs/deployment.md), and the health-check noise it logs without systemd.
const RLIMIT_ERROR =
  'time="2026-11-25T17:01:43Z" level=error msg="unable to get systemd connection to add healthchecks"\n' +
  'Error: runc: runc create failed: unable to start container process: error during container init: ' +
  'error setting rlimits for ready process: error setting rlimit type 7: operation not permitted: OCI permission denied';

let work: string;
let model: string;
let engines: FakeEngine[];
beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), 'cr-verify-'));
  model = path.join(work, 'model');
  cpSync(FIXTURE_MODEL, model, { recursive: true });
  engines = [];
});
afterEach(() => {
  for (const e of engines) e.cleanup();
  rmSync(work, { recursive: true, force: true });
});

function verify(args: string[], settings: Record<string, string> = {}, images = [IMAGE]) {
  const engine = fakeEngine(images, { FAKE_MODEL_DIR: model, ...settings });
  engines.push(engine);
  return runScript(SCRIPT, args, engine.env);
}
/** The fake engine's image id: the SHA-256 of the name. */
const imageId = (name: string) => `sha256:${createHash('sha256').update(name).digest('hex')}`;

describe('verify-release.sh: a verdict on the release', () => {
  it('passes an intact image: its id, every model file and the published manifest', async () => {
    const r = await verify([IMAGE, imageId(IMAGE), path.join(FIXTURE_MODEL, 'manifest.json')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^OK +model\.onnx sha256 [0-9a-f]{64}$/m);
    expect(r.stdout).toMatch(/^OK +tokenizer\.json sha256 [0-9a-f]{64}$/m);
    expect(r.stdout).toContain('OK: image id matches the published one');
    expect(r.stdout).toContain('OK: manifest.json matches the published one');
    expect(r.stdout.trim().endsWith('verified')).toBe(true);
  });

  it('fails a changed model file with exit 1 and FAIL, not as an error', async () => {
    const tokenizer = path.join(model, 'tokenizer.json');
    writeFileSync(tokenizer, readFileSync(tokenizer, 'utf8').replace('"', ' "'));
    const r = await verify([IMAGE]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAIL tokenizer\.json sha256 [0-9a-f]{64}$/m);
    expect(r.stdout).toMatch(/^OK +model\.onnx sha256/m);
    expect(r.stdout).toContain('model files: 1 of 2 differ from manifest.json');
    expect(r.stdout).toMatch(/^FAIL: model files do not match manifest\.json$/m);
    expect(r.stderr).not.toContain('could not');
  });

  it('fails a model file that is missing, or a manifest.json that is, as a mismatch (exit 1)', async () => {
    unlinkSync(path.join(model, 'model.onnx'));
    const missingFile = await verify([IMAGE]);
    expect(missingFile.code).toBe(1);
    expect(missingFile.stdout).toMatch(/^FAIL model\.onnx ENOENT$/m);
    expect(missingFile.stdout).toMatch(/^FAIL: model files do not match manifest\.json$/m);

    unlinkSync(path.join(model, 'manifest.json'));
    const missingManifest = await verify([IMAGE]);
    expect(missingManifest.code).toBe(1);
    expect(missingManifest.stdout).toContain('model files: differ from manifest.json (manifest.json: ENOENT)');
  });

  it('fails an image id or a manifest.json other than the published ones (exit 1)', async () => {
    const otherId = await verify([IMAGE, `sha256:${'0'.repeat(64)}`]);
    expect(otherId.code).toBe(1);
    expect(otherId.stdout).toContain(`FAIL: image id differs from the published sha256:${'0'.repeat(64)}`);

    const published = path.join(work, 'published.json');
    writeFileSync(published, readFileSync(path.join(FIXTURE_MODEL, 'manifest.json'), 'utf8').replace('{', '{ '));
    const otherManifest = await verify([IMAGE, '', published]);
    expect(otherManifest.code).toBe(1);
    expect(otherManifest.stdout).toContain(`FAIL: the image's manifest.json differs from ${published}`);
  });
});

describe('verify-release.sh: a check that could not run is an error, never "do not match"', () => {
  it('a container that cannot start: exit 3, "could not run the image" with the engine\'s error', async () => {
    const r = await verify([IMAGE], { FAKE_RUN_ERROR: RLIMIT_ERROR, FAKE_RUN_STATUS: '126' });
    expect(r.code).toBe(3);
    expect(r.stdout).not.toContain('do not match');
    expect(r.stdout).not.toMatch(/^FAIL/m);
    expect(r.stderr).toMatch(
      /^ERROR: could not run the image: Error: runc: .*error setting rlimit type 7: operation not permitted: OCI permission denied \(.*exit status 126\)$/m,
    );
  });

  it("the engine's own failure (125) and a command missing from the image (127): exit 3", async () => {
    const engine = await verify([IMAGE], { FAKE_RUN_ERROR: 'Error: crun: cgroup creation failed', FAKE_RUN_STATUS: '125' });
    expect(engine.code).toBe(3);
    expect(engine.stderr).toMatch(/^ERROR: could not run the image: Error: crun: cgroup creation failed/m);
    const noNode = await verify([IMAGE], {
      FAKE_RUN_ERROR: 'Error: runc: exec: "node": executable file not found in $PATH',
      FAKE_RUN_STATUS: '127',
    });
    expect(noNode.code).toBe(3);
    expect(noNode.stdout).not.toContain('do not match');
  });

  it('no engine answers: exit 3, not a verdict', async () => {
    const r = await verify([IMAGE], { FAKE_INFO_ERROR: 'Error: cannot connect to Podman' });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^ERROR: could not run the image: no container engine/m);
    expect(r.stdout).not.toMatch(/FAIL/);
  });

  it('an image that is not on this machine: exit 3, "could not inspect the image"', async () => {
    const r = await verify([IMAGE], {}, []);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^ERROR: could not inspect the image: Error: inspecting object: .*image not known/m);
  });

  it('an archive that does not load: exit 3, "could not load the archive"', async () => {
    const archive = path.join(work, 'release.tar');
    writeFileSync(archive, 'not an image archive');
    const r = await verify([archive], {
      FAKE_LOAD_ERROR: 'Error: payload does not match any of the supported image formats',
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^ERROR: could not load the archive: Error: payload does not match/m);

    const loads = await verify([archive], { FAKE_LOADED_IMAGE: IMAGE }, []);
    expect(loads.code).toBe(0);
    expect(loads.stdout).toContain(`archive ${archive}: loaded ${IMAGE}`);
  });

  it('usage: no image, or an unreadable published manifest, is exit 2', async () => {
    expect((await verify([])).code).toBe(2);
    const r = await verify([IMAGE, '', path.join(work, 'absent.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot read the published manifest');
  });
});
