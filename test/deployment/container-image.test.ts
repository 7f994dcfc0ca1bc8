// The shipped container image, run as an operator runs it: built from the real Dockerfile, started
// with a read-only root file system, all capabilities dropped and no-new-privileges, reached only
// through its published ports (TLS with the self-signed certificate it makes at start).
//
// Needs a Docker-API container engine (DOCKER_HOST) and the podman CLI for the build (see below).
// .ci/run sets both up with scripts/container/setup-podman.sh; elsewhere the suite is skipped.
//
// Why the image is built with the podman CLI and not testcontainers' fromDockerfile: testcontainers
// 12 builds through the Docker build API, which cannot pass build secrets, and the npm registry's TLS
// chain here (and at customers behind intercepting proxies) needs the CA bundle as the `npm_ca`
// secret. `--format docker` keeps the HEALTHCHECK, which the OCI format drops.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GenericContainer,
  Wait,
  getContainerRuntimeClient,
  type StartedTestContainer,
} from 'testcontainers';
import {
  BASE_IMAGE,
  BUILD_LABELS,
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

const API_KEY = 'container-test-key-5b1d0c';
const MARKER = 'ZQX-CONTAINER-MARKER-7731';
const UID = '10001';

function engineSkipReason(): string | undefined {
  const host = process.env.DOCKER_HOST;
  if (host === undefined || host === '') {
    return 'DOCKER_HOST is not set (run scripts/container/setup-podman.sh and export what it prints)';
  }
  if (host.startsWith('unix://')) {
    const socket = host.slice('unix://'.length);
    if (!existsSync(socket) || !statSync(socket).isSocket()) return `container API socket ${socket} is missing`;
  }
  return undefined;
}
const skipReason = engineSkipReason();
if (skipReason !== undefined) console.warn(`[container-image] suite skipped: ${skipReason}`);

/** Without the shipped model in the tree, the contract fixture is mounted read-only. */
const modelMounts = shippedModel ? [] : [{ source: FIXTURE_MODEL, target: '/opt/model', mode: 'ro' as const }];
const modelEnv: Record<string, string> = shippedModel ? {} : { MODEL_DIR: '/opt/model' };

/** GenericContainer has no switch for a read-only root file system; the Docker API has one. */
class HardenedContainer extends GenericContainer {
  withReadOnlyRootFilesystem(): this {
    this.hostConfig.ReadonlyRootfs = true;
    return this;
  }
}

/**
 * The image run as compose and the chart run it: read-only root, tmpfs /tmp, no capabilities,
 * no-new-privileges, the image's own user. `mounts` go in one list with the model's, because
 * withBindMounts replaces earlier mounts.
 */
function hardened(env: Record<string, string>, mounts: Array<{ source: string; target: string; mode: 'ro' }> = []) {
  return new HardenedContainer(IMAGE)
    .withReadOnlyRootFilesystem()
    .withTmpFs({ '/tmp': 'rw,noexec,nosuid,size=64m' })
    .withDroppedCapabilities('ALL')
    .withSecurityOpt('no-new-privileges')
    .withBindMounts([...mounts, ...modelMounts])
    .withEnvironment({ ...env, ...modelEnv });
}

/** IMAGE with the contract model baked in (its tokenizer.json replaced by `tokenizer` when given). */
async function buildWithFixtureModel(dir: string, tag: string, tokenizer?: string): Promise<void> {
  for (const f of ['manifest.json', 'model.onnx', 'tokenizer.json']) {
    writeFileSync(path.join(dir, f), readFileSync(path.join(FIXTURE_MODEL, f)));
  }
  if (tokenizer !== undefined) writeFileSync(path.join(dir, 'tokenizer.json'), tokenizer);
  writeFileSync(path.join(dir, 'Dockerfile'), `FROM ${IMAGE}\nCOPY manifest.json model.onnx tokenizer.json /app/models/conversation-risk/\n`);
  await run(CLI, ['build', '-q', '-t', tag, dir]);
}

/** The parts of compose/compose.yaml the compose check runs the image with. */
interface ComposeFile {
  services: Record<
    string,
    {
      user: string;
      read_only: boolean;
      tmpfs: string[];
      cap_drop: string[];
      security_opt: string[];
      environment: Record<string, string | number | boolean | null>;
      secrets: string[];
      deploy: { resources: { limits: { cpus: string; memory: string } } };
    }
  >;
  secrets: Record<string, { file: string }>;
}

/** A two-party chat of `turns` lines; `text` is put in every line so it can be searched for. */
function conversation(turns: number, text: string): string {
  const lines: string[] = [];
  for (let i = 0; i < turns; i++) {
    lines.push(`${i % 2 === 0 ? 'user1' : 'user2'}: ${text} how was school today, did you finish the ${i} homework`);
  }
  return lines.join('\n');
}

describe.skipIf(skipReason !== undefined)('container image', () => {
  let container: StartedTestContainer;
  let logs = '';
  let httpsPort = 0;

  beforeAll(async () => {
    const built = await buildAppImage();
    console.info(`[container-image] ${built}; model: ${shippedModel ? 'shipped' : 'contract fixture (mounted)'}`);

    const candidate = hardened({
      API_KEYS: API_KEY,
      // One worker on half a CPU keeps the drain check's batch running for seconds.
      WORKERS: '1',
      MAX_QUEUE: '256',
      RATE_LIMIT_MAX: '1000',
      SHUTDOWN_GRACE_MS: '60000',
      REQUEST_TIMEOUT_MS: '120000',
    })
      .withResourcesQuota({ cpu: 0.5 })
      .withExposedPorts(8443, 8080, 9464)
      .withLogConsumer((stream) => {
        stream.on('data', (chunk: Buffer | string) => {
          logs += chunk.toString();
        });
      })
      .withWaitStrategy(Wait.forHttp('/readyz', 8443).usingTls().allowInsecure().forStatusCode(200))
      .withStartupTimeout(120_000);
    try {
      container = await candidate.start();
    } catch (err) {
      console.error(`[container-image] container did not become ready; its log:\n${logs}`);
      throw err;
    }
    httpsPort = container.getMappedPort(8443);
  }, 900_000);

  afterAll(async () => {
    if (container === undefined) return;
    // The drain check stops it; if that check failed first, stop it here. Then remove it.
    await container.stop({ timeout: 0, remove: false });
    const client = await getContainerRuntimeClient();
    await client.container.remove(client.container.getById(container.getId()), { removeVolumes: true });
  });

  it('carries the OCI labels and the health check', async () => {
    const { stdout } = await run(CLI, ['image', 'inspect', IMAGE]);
    const [info] = JSON.parse(stdout) as [
      {
        Config: { Labels: Record<string, string>; Healthcheck?: { Test: string[] }; User: string; Env: string[] };
        Healthcheck?: { Test: string[] };
      },
    ];
    expect(info.Config.Labels['org.opencontainers.image.version']).toBe(BUILD_LABELS.VERSION);
    expect(info.Config.Labels['org.opencontainers.image.revision']).toBe(BUILD_LABELS.REVISION);
    expect(info.Config.Labels['org.opencontainers.image.source']).toBe(BUILD_LABELS.SOURCE);
    // The base the build actually used (an ARG before the first FROM is empty in a stage unless redeclared).
    expect(info.Config.Labels['org.opencontainers.image.base.name']).toBe(BASE_IMAGE);
    // docker keeps the health check in Config, podman's inspect one level up.
    expect((info.Config.Healthcheck ?? info.Healthcheck)?.Test).toEqual(['CMD', 'node', '/app/healthcheck.mjs']);
    expect(info.Config.User).toBe(`${UID}:${UID}`);
    expect(info.Config.Env).toContain('ORT_DISABLE_TELEMETRY=1');
    expect(info.Config.Env).toContain('MALLOC_ARENA_MAX=2');
  });

  // The operator's offline check (docs/deployment.md), on the shipped image when the model is in the
  // tree, and always on images with the contract model baked in: intact, and with one byte changed.
  it('verifies a release offline: baked-in model files against manifest.json, and catches tampering', async () => {
    const verify = (image: string, ...extra: string[]) =>
      run(path.join(ROOT, 'scripts/container/verify-release.sh'), [image, ...extra], {
        cwd: ROOT,
        env: ENGINE_ENV,
      });
    if (shippedModel) expect((await verify(IMAGE)).stdout.trim().endsWith('verified')).toBe(true);

    const dir = mkdtempSync(path.join(tmpdir(), 'cr-release-'));
    const good = `${IMAGE}-verify-good`;
    const tampered = `${IMAGE}-verify-tampered`;
    try {
      await buildWithFixtureModel(dir, good);
      const { stdout: imageId } = await run(CLI, ['image', 'inspect', '--format', '{{.Id}}', good]);
      const ok = await verify(good, imageId.trim(), path.join(FIXTURE_MODEL, 'manifest.json'));
      expect(ok.stdout).toMatch(/^OK +model\.onnx sha256 [0-9a-f]{64}$/m);
      expect(ok.stdout).toContain('OK: image id matches the published one');
      expect(ok.stdout).toContain('OK: manifest.json matches the published one');

      const tokenizer = readFileSync(path.join(FIXTURE_MODEL, 'tokenizer.json'), 'utf8');
      await buildWithFixtureModel(dir, tampered, tokenizer.replace('"', ' "'));
      const exitOf = (p: Promise<unknown>) =>
        p.then(
          () => ({ code: 0, stdout: '' }),
          (err: { code: number; stdout: string }) => err,
        );
      const refused = await exitOf(verify(tampered));
      expect(refused.code).toBe(1);
      expect(refused.stdout).toMatch(/^FAIL tokenizer\.json sha256/m);
      expect((await exitOf(verify(good, `sha256:${'0'.repeat(64)}`))).code).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await run(CLI, ['rmi', '-f', good, tampered]).catch(() => {});
    }
  }, 120_000);

  it('becomes ready with no network at all (air-gapped)', async () => {
    const isolated = hardened({ API_KEYS: API_KEY })
      .withNetworkMode('none')
      .withWaitStrategy(Wait.forSuccessfulCommand('node /app/healthcheck.mjs'))
      .withStartupTimeout(60_000);
    const started = await isolated.start();
    try {
      const interfaces = await started.exec(['cat', '/proc/net/dev']);
      expect(interfaces.stdout).not.toMatch(/eth0/);
      expect((await started.exec(['node', '/app/healthcheck.mjs'])).exitCode).toBe(0);
    } finally {
      await started.stop({ remove: true });
    }
  }, 90_000);

  it('runs the service process as the numeric non-root user', async () => {
    const status = await container.exec(['cat', '/proc/1/status']);
    expect(status.exitCode).toBe(0);
    const uids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status.stdout);
    expect(uids?.slice(1)).toEqual([UID, UID, UID, UID]);
    const cmdline = await container.exec(['cat', '/proc/1/cmdline']);
    // The image's CMD: the service itself, with the V8 memory bounds npm start also sets.
    expect(cmdline.stdout.split('\0').slice(0, 4)).toEqual(['node', '--max-semi-space-size=2', '--heap-growing-percent=20', 'src/main.ts']);
    // Capabilities dropped: the effective set is empty.
    expect(/^CapEff:\s+0+$/m.test(status.stdout)).toBe(true);
  });

  it('refuses writes to the root file system and allows them only in /tmp', async () => {
    for (const target of ['/app/src/injected.ts', '/app/models/x', '/etc/x', '/x']) {
      const write = await container.exec(['sh', '-c', `echo x > ${target}`]);
      expect(write.exitCode, target).not.toBe(0);
      expect(write.output, target).toMatch(/Read-only file system/);
    }
    const tmp = await container.exec(['sh', '-c', 'echo x > /tmp/probe && cat /tmp/probe']);
    expect(tmp.exitCode).toBe(0);
  });

  it('answers the probes and the health check script', async () => {
    expect((await request(httpsPort, '/livez')).status).toBe(200);
    const ready = await request(httpsPort, '/readyz');
    expect(ready.status).toBe(200);
    const health = await request(httpsPort, '/health');
    expect(JSON.parse(health.body)).toEqual({ status: 'healthy' });
    const check = await container.exec(['node', '/app/healthcheck.mjs']);
    expect(check.exitCode).toBe(0);
  });

  it('scores a conversation over TLS 1.2+ with the API key from the environment', async () => {
    const reply = await request(httpsPort, '/predict', {
      key: API_KEY,
      body: { conversation: conversation(12, 'hello there'), age_a: '34', age_b: '12' },
    });
    expect(reply.status, reply.body).toBe(200);
    expect(['TLSv1.2', 'TLSv1.3']).toContain(reply.tlsProtocol);
    expect(reply.headers['strict-transport-security']).toBeDefined();
    const prediction = JSON.parse(reply.body) as Record<string, unknown>;
    expect(typeof prediction.harmful_score).toBe('number');
    expect(['user1', 'user2', 'neither']).toContain(prediction.predatory_user);
    expect(prediction.used_age_features).toBe(true);

    const anonymous = await request(httpsPort, '/predict', { body: { conversation: 'user1: hi' } });
    expect(anonymous.status).toBe(401);
    const wrong = await request(httpsPort, '/predict', { key: 'not-the-key', body: { conversation: 'user1: hi' } });
    expect(wrong.status).toBe(403);
  });

  it('redirects plain HTTP to HTTPS and serves metrics only on the metrics port', async () => {
    const redirect = await request(container.getMappedPort(8080), '/health', { tls: false });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.location).toMatch(/^https:\/\//);

    const metrics = await request(container.getMappedPort(9464), '/metrics', { tls: false });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^conversation_risk_model_loaded 1$/m);
    expect((await request(httpsPort, '/metrics')).status).not.toBe(200);
  });

  it('keeps conversation text out of the container logs', async () => {
    const text = conversation(6, MARKER);
    const paths: Array<[string, unknown, number]> = [
      ['/predict', { conversation: text }, 200],
      ['/batch_predict', { conversations: [text, { conversation: text, age_a: 'adult' }] }, 200],
      ['/predict', { conversation: text, age_a: `not-an-age-${MARKER}` }, 422],
    ];
    for (const [route, body, status] of paths) {
      const reply = await request(httpsPort, route, { key: API_KEY, body });
      expect(reply.status, `${route} ${reply.body}`).toBe(status);
    }
    expect((await request(httpsPort, '/predict', { key: MARKER, body: { conversation: text } })).status).toBe(403);
    // The service does log (startup, requests): an empty log would make this check vacuous.
    await new Promise((r) => setTimeout(r, 500));
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(MARKER);
    expect(logs).not.toContain(API_KEY);
  });

  it('runs as compose.yaml declares it: its settings, its secret files (own certificate, hashed key, audit hash key)', async () => {
    const compose = parse(readFileSync(path.join(ROOT, 'compose/compose.yaml'), 'utf8')) as ComposeFile;
    const service = compose.services['conversation-risk']!;
    const dir = mkdtempSync(path.join(tmpdir(), 'cr-secrets-'));
    try {
      // What compose/init-secrets.sh makes: a certificate and a key stored only as its SHA-256.
      await run('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
        '-subj', '/CN=appliance.test', '-keyout', path.join(dir, 'tls.key'), '-out', path.join(dir, 'tls.crt'),
      ]);
      const { stdout } = await run('openssl', ['x509', '-in', path.join(dir, 'tls.crt'), '-noout', '-fingerprint', '-sha256']);
      const fingerprint = stdout.trim().split('=')[1];
      const plainKey = 'operator-key-3f9a1c7e5b2d4a6f8e0c';
      writeFileSync(path.join(dir, 'api_keys.txt'), `sha256:${createHash('sha256').update(plainKey).digest('hex')}\n`);
      writeFileSync(path.join(dir, 'webhook_secret.txt'), `whsec_${randomBytes(32).toString('base64')}\n`);
      const auditKey = randomBytes(32).toString('hex');
      writeFileSync(path.join(dir, 'audit_hash_key.txt'), `${auditKey}\n`);
      // The container user must read what the host's root wrote (init-secrets.sh: root:10001 0440).
      for (const f of ['tls.key', 'tls.crt', 'api_keys.txt', 'webhook_secret.txt', 'audit_hash_key.txt']) chmodSync(path.join(dir, f), 0o444);

      // compose mounts each secret's file at /run/secrets/<name>; the files live in ./secrets.
      const mounts = service.secrets.map((name) => ({
        source: path.join(dir, path.basename(compose.secrets[name]!.file)),
        target: `/run/secrets/${name}`,
        mode: 'ro' as const,
      }));
      // `${VAR:-default}` as compose expands it with VAR unset; entries without a value pass nothing.
      const env: Record<string, string> = { ...modelEnv };
      for (const [name, value] of Object.entries(service.environment)) {
        if (value !== null) env[name] = String(value).replace(/^\$\{\w+:-(.*)\}$/, '$1');
      }
      // As AUDIT_LOG=true in compose/.env would: the audit line shows which key hashed it.
      env.AUDIT_LOG = 'true';
      const [tmpPath, tmpOptions] = service.tmpfs[0]!.split(/:(.*)/s) as [string, string];
      const limits = service.deploy.resources.limits;
      let logs = '';
      const asComposed = new HardenedContainer(IMAGE)
        .withUser(service.user)
        .withTmpFs({ [tmpPath]: tmpOptions })
        .withDroppedCapabilities(...service.cap_drop)
        .withSecurityOpt(...service.security_opt)
        .withResourcesQuota({ cpu: Number(limits.cpus), memory: Number.parseInt(limits.memory, 10) })
        .withBindMounts([...mounts, ...modelMounts])
        .withEnvironment(env)
        // Every port the image EXPOSEs: testcontainers waits until all of them are published.
        .withExposedPorts(8443, 8080, 9464)
        .withLogConsumer((stream) => stream.on('data', (c: Buffer | string) => (logs += c.toString())))
        .withWaitStrategy(Wait.forHttp('/readyz', 8443).usingTls().allowInsecure().forStatusCode(200))
        .withStartupTimeout(60_000);
      expect(service.read_only).toBe(true);
      const started = await asComposed
        .withReadOnlyRootFilesystem()
        .start()
        .catch((err: unknown) => {
          console.error(`[container-image] compose-configured container log:\n${logs}`);
          throw err;
        });
      try {
        const port = started.getMappedPort(8443);
        const chat = 'user1: hi\nuser2: hello';
        const ok = await request(port, '/predict', { key: plainKey, body: { conversation: chat } });
        expect(ok.status, ok.body).toBe(200);
        expect(ok.peerFingerprint256).toBe(fingerprint);
        // AUDIT_HASH_KEY_FILE from compose's audit_hash_key secret: the HMAC under that key, no plain SHA-256.
        const hmac = createHmac('sha256', auditKey).update(chat).digest('hex');
        for (let i = 0; i < 50 && !logs.includes('conversation_hmac_sha256'); i++) await new Promise((r) => setTimeout(r, 100));
        expect(logs).toContain(`"conversation_hmac_sha256":"${hmac}"`);
        expect(logs).not.toContain('conversation_sha256');
        const hashAsKey = readFileSync(path.join(dir, 'api_keys.txt'), 'utf8').trim();
        expect((await request(port, '/predict', { key: hashAsKey, body: { conversation: 'user1: hi' } })).status).toBe(403);
        expect((await started.exec(['node', '/app/healthcheck.mjs'])).exitCode).toBe(0);
      } finally {
        await started.stop({ remove: true });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  // Last: it stops the container.
  it('drains an in-flight request on SIGTERM and exits 0', async () => {
    const batch = Array.from({ length: 100 }, (_, i) => conversation(600, `drain ${i}`));
    let answeredAt = 0;
    const inFlight = request(httpsPort, '/batch_predict', {
      key: API_KEY,
      body: { conversations: batch },
      timeoutMs: 120_000,
    }).then((r) => {
      answeredAt = Date.now();
      return r;
    });
    // SIGTERM goes out as soon as the metrics show the batch being scored: no guessing at timings.
    const metricsPort = container.getMappedPort(9464);
    const busy = /^conversation_risk_(inference_in_flight|queue_depth) [1-9]/m;
    while (answeredAt === 0 && !busy.test((await request(metricsPort, '/metrics', { tls: false })).body)) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(answeredAt, 'the batch finished before it was seen in flight: make it larger').toBe(0);
    const stopAt = Date.now();
    const stopping = container.stop({ timeout: 60_000, remove: false });
    const reply = await inFlight;
    await stopping;
    expect(reply.status, reply.body).toBe(200);
    expect(answeredAt).toBeGreaterThan(stopAt);
    console.info(`[container-image] SIGTERM drain: the batch answered ${answeredAt - stopAt} ms after stop began`);
    expect((JSON.parse(reply.body) as { predictions: unknown[] }).predictions).toHaveLength(100);

    const client = await getContainerRuntimeClient();
    const state = (await client.container.inspect(client.container.getById(container.getId()))).State;
    expect(state.Running).toBe(false);
    expect(state.ExitCode).toBe(0);
  }, 180_000);
});

// The air-gapped install of docs/deployment.md with a real archive: `save | gzip` on the connected
// side, the image absent on the other, then verify-release.sh given the archive loads it (Podman
// 4.3's `load` cannot read gzip itself) and checks the image id and the model manifest.
// Needs only the engine's CLI, not the Docker API.
const airGapSkip = hasCommand(CLI) ? undefined : `${CLI} is not installed`;
if (airGapSkip !== undefined) console.warn(`[container-image] air-gapped release test skipped: ${airGapSkip}`);

describe.skipIf(airGapSkip !== undefined)('release archive (air-gapped install)', () => {
  it('saves the image as a gzipped archive, loads it back and verifies it with verify-release.sh', async () => {
    await buildAppImage();
    const dir = mkdtempSync(path.join(tmpdir(), 'cr-airgap-'));
    const release = `${IMAGE}-release`;
    const inspectId = async () => (await run(CLI, ['image', 'inspect', '--format', '{{.Id}}', release])).stdout.trim();
    try {
      let manifest = path.join(ROOT, 'models/conversation-risk/manifest.json');
      if (shippedModel) {
        await run(CLI, ['tag', IMAGE, release]);
      } else {
        await buildWithFixtureModel(dir, release);
        manifest = path.join(FIXTURE_MODEL, 'manifest.json');
      }
      const publishedId = await inspectId();
      const archive = path.join(dir, 'conversation-risk-release.tar.gz');
      const started = Date.now();
      await run('sh', ['-c', '"$0" save "$1" | gzip -1 > "$2"', CLI, release, archive], { env: ENGINE_ENV });
      // The air-gapped side has no such image: only the archive. (Its layers stay, under IMAGE.)
      await run(CLI, ['rmi', release]);
      await expect(inspectId()).rejects.toThrow();

      const { stdout } = await run(path.join(ROOT, 'scripts/container/verify-release.sh'), [archive, publishedId, manifest], {
        cwd: ROOT,
        env: ENGINE_ENV,
      });
      expect(stdout).toMatch(/^archive .*: loaded \S+$/m);
      expect(stdout).toContain('OK: image id matches the published one');
      expect(stdout).toContain('OK: manifest.json matches the published one');
      expect(stdout.trim().endsWith('verified')).toBe(true);
      expect(await inspectId()).toBe(publishedId);
      console.info(`[container-image] save | gzip, load and verify of the release archive: ${Date.now() - started} ms`);
    } finally {
      await run(CLI, ['rmi', release]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 900_000);
});
