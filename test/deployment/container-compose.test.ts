// compose/compose.yaml brought up for real with podman-compose (Debian 12's 1.0.x), as
// docs/deployment.md tells an operator to: init-secrets.sh in a copy of compose/, `up -d` of the
// appliance alone (podman-compose ignores profiles), HTTPS /health on the published port, one chat
// scored with the key init-secrets.sh printed, the redirect port sending clients to the published
// HTTPS port, the health check run on demand (Podman schedules it only with systemd), a graceful
// stop, and `down` leaving nothing behind.
//
// Needs podman and podman-compose (.ci/run installs both) and root: init-secrets.sh makes the secret
// files root:10001 0440 for the container's user. Elsewhere the suite is skipped with a message.
import { X509Certificate } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI,
  ENGINE_ENV,
  FIXTURE_MODEL,
  IMAGE,
  ROOT,
  buildAppImage,
  hasCommand,
  request,
  run,
  shippedModel,
} from '../helpers/container-image.ts';
import { until } from '../helpers/wait.ts';

function skipReasonOf(): string | undefined {
  if (!hasCommand(CLI)) return `${CLI} is not installed`;
  if (!hasCommand('podman-compose')) return 'podman-compose is not installed (apt-get install podman-compose)';
  if (process.getuid?.() !== 0) return 'needs root (rootful podman; init-secrets.sh gives the secret files to gid 10001)';
  return undefined;
}
const skipReason = skipReasonOf();
if (skipReason !== undefined) console.warn(`[container-compose] suite skipped: ${skipReason}`);

/** A project name of its own, so that an operator's `conversation-risk` project is never touched. */
const PROJECT = `crcomposetest${process.pid}`;
const CONTAINER = `${PROJECT}_conversation-risk_1`;
const NETWORK = `${PROJECT}_appliance`;
/** What docs/deployment.md passes for the two settings podman-compose 1.0 drops. */
const RUN_ARGS = '--podman-run-args=--pids-limit=256 --stop-timeout=30';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

interface Inspect {
  State: { Running: boolean; ExitCode: number; Health?: { Status: string } };
  Config: { User: string; StopTimeout: number };
  HostConfig: { ReadonlyRootfs: boolean; PidsLimit: number; Memory: number; NanoCpus: number; SecurityOpt: string[] };
  Mounts: Array<{ Destination: string }>;
}

describe.skipIf(skipReason !== undefined)('compose.yaml with podman-compose', () => {
  let dir = '';
  let env: NodeJS.ProcessEnv = {};
  let apiKey = '';
  let ports = { https: 0, http: 0, metrics: 0 };
  const compose = (...args: string[]) =>
    run('podman-compose', ['-p', PROJECT, ...args], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 });
  const inspect = async () => (JSON.parse((await run(CLI, ['container', 'inspect', CONTAINER])).stdout) as [Inspect])[0];
  const projectContainers = async (all: boolean) =>
    (
      await run(CLI, ['ps', ...(all ? ['-a'] : []), '--filter', `label=io.podman.compose.project=${PROJECT}`, '--format', '{{.Names}}'])
    ).stdout
      .split('\n')
      .filter((l) => l !== '');
  const started = Date.now();

  beforeAll(async () => {
    console.info(`[container-compose] ${await buildAppImage()}`);
    // A copy of compose/ without any secrets of the checkout's own.
    dir = mkdtempSync(path.join(tmpdir(), 'cr-compose-'));
    for (const f of readdirSync(path.join(ROOT, 'compose'))) {
      if (f !== 'secrets') cpSync(path.join(ROOT, 'compose', f), path.join(dir, f), { recursive: true });
    }
    const { stdout: secretsOut } = await run(path.join(dir, 'init-secrets.sh'), [], { env: { ...process.env, TLS_CN: 'appliance.test' } });
    apiKey = /^API key \(shown once[^:]*: (\S+)$/m.exec(secretsOut)?.[1] ?? '';
    expect(apiKey, secretsOut).toMatch(/^[A-Za-z0-9]{20,}$/);

    ports = { https: await freePort(), http: await freePort(), metrics: await freePort() };
    env = {
      ...ENGINE_ENV,
      CONVERSATION_RISK_IMAGE: IMAGE,
      HTTPS_PUBLISH: String(ports.https),
      HTTP_PUBLISH: String(ports.http),
      METRICS_PUBLISH: String(ports.metrics),
    };
    const files: string[] = [];
    if (!shippedModel) {
      // The image has no model of its own: the contract fixture, mounted as the docs say for a retrained one.
      writeFileSync(
        path.join(dir, 'fixture-model.yaml'),
        `services:\n  conversation-risk:\n    volumes: ["${FIXTURE_MODEL}:/opt/model:ro"]\n    environment:\n      MODEL_DIR: /opt/model\n`,
      );
      files.push('-f', 'compose.yaml', '-f', 'fixture-model.yaml');
    }
    const up = await compose(...files, RUN_ARGS, 'up', '-d', 'conversation-risk');
    await until(
      async () => {
        const health = await request(ports.https, '/health').catch(() => undefined);
        if (health?.status === 200) return health;
        if (!(await inspect()).State.Running) throw new Error(`the container stopped:\n${up.stdout}\n${(await run(CLI, ['logs', CONTAINER])).stderr}`);
        return undefined;
      },
      120_000,
      500,
    );
    console.info(`[container-compose] podman-compose up to /health 200: ${Date.now() - started} ms (build included)`);
  }, 900_000);

  afterAll(async () => {
    if (dir === '') return;
    await compose('down', '-t', '5').catch(() => undefined);
    // podman-compose 1.0's down leaves the project's network (docs/deployment.md says to remove it).
    await run(CLI, ['network', 'rm', '-f', NETWORK]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts only the named service, hardened and limited as compose.yaml declares it', async () => {
    expect(await projectContainers(true)).toEqual([CONTAINER]);
    const info = await inspect();
    expect(info.Config.User).toBe('10001:10001');
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges');
    expect(info.HostConfig.Memory).toBe(1024 ** 3);
    expect(info.HostConfig.NanoCpus).toBe(2e9);
    // pids_limit and stop_grace_period, which podman-compose 1.0 drops, from --podman-run-args.
    expect(info.HostConfig.PidsLimit).toBe(256);
    expect(info.Config.StopTimeout).toBe(30);
    const cgroupPids = await run(CLI, ['exec', CONTAINER, 'cat', '/sys/fs/cgroup/pids/pids.max']).catch(() =>
      run(CLI, ['exec', CONTAINER, 'cat', '/sys/fs/cgroup/pids.max']),
    );
    expect(cgroupPids.stdout.trim()).toBe('256');
    expect(info.Mounts.map((m) => m.Destination)).toEqual(
      expect.arrayContaining(['/run/secrets/api_keys', '/run/secrets/tls_cert', '/run/secrets/tls_key', '/run/secrets/webhook_secret']),
    );
  });

  it('answers /health over HTTPS with its own certificate and scores a chat with the key init-secrets.sh printed', async () => {
    const health = await request(ports.https, '/health');
    expect(JSON.parse(health.body)).toEqual({ status: 'healthy' });
    const certificate = new X509Certificate(readFileSync(path.join(dir, 'secrets/tls.crt')));
    expect(health.peerFingerprint256).toBe(certificate.fingerprint256);

    const chat = 'user1: hi, how was school today?\nuser2: fine, we had a maths test\nuser1: how did it go?';
    const scored = await request(ports.https, '/predict', { key: apiKey, body: { conversation: chat } });
    expect(scored.status, scored.body).toBe(200);
    expect(typeof (JSON.parse(scored.body) as { harmful_score: unknown }).harmful_score).toBe('number');
    expect((await request(ports.https, '/predict', { body: { conversation: chat } })).status).toBe(401);
  });

  it('redirects plain HTTP to the published HTTPS port (PUBLIC_HTTPS_PORT from HTTPS_PUBLISH)', async () => {
    const redirect = await request(ports.http, '/health?x=1', { tls: false });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.location).toBe(`https://127.0.0.1:${ports.https}/health?x=1`);
    const metrics = await request(ports.metrics, '/metrics', { tls: false });
    expect(metrics.status).toBe(200);
  });

  it('runs the compose health check on demand: Podman without systemd does not schedule it', async () => {
    // Exit 0 (healthy) or execFile rejects.
    await run(CLI, ['healthcheck', 'run', CONTAINER], { env: ENGINE_ENV });
    expect((await inspect()).State.Health?.Status).toBe('healthy');
  });

  // Last: it stops and removes the service.
  it('stops gracefully within the stop timeout, and down leaves nothing running', async () => {
    const stopAt = Date.now();
    await compose('stop', '-t', '30', 'conversation-risk');
    const stopMs = Date.now() - stopAt;
    const stopped = await inspect();
    expect(stopped.State.Running).toBe(false);
    // 0: the service drained and exited on SIGTERM (137 would be the SIGKILL after the timeout).
    expect(stopped.State.ExitCode).toBe(0);
    expect(stopMs).toBeLessThan(30_000);

    await compose('down', '-t', '30');
    expect(await projectContainers(true)).toEqual([]);
    expect(await projectContainers(false)).toEqual([]);
    // podman-compose 1.0's `down` leaves the project network behind; removing it is the test's clean-up
    // (and fails the test if the network is not there, e.g. when a newer podman-compose removes it).
    await run(CLI, ['network', 'rm', NETWORK]);
    console.info(`[container-compose] stop ${stopMs} ms; suite ${Date.now() - started} ms`);
  }, 90_000);
});
