// The Helm chart rendered and checked by the real helm (4.1.4, pinned by SHA-256 and run offline, see
// helpers/helm.ts): `helm lint --strict`, and `helm template` with the defaults and every ci/ values
// file, each rendered object validated against the Kubernetes, Prometheus Operator and cert-manager
// models. Then the rules the chart keeps, each checked on what helm actually renders.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config.ts';
import {
  CHART_DIR,
  HELM_VERSION,
  MODELS,
  RELEASE,
  helm,
  helmTemplate,
  manifestProblems,
  renderChart,
  renderNotes,
  valueArgs,
  type K8sObject,
  type RenderValues,
} from '../helpers/helm.ts';

const FULLNAME = `${RELEASE}-conversation-risk`;
const ciFiles = readdirSync(path.join(CHART_DIR, 'ci')).filter((f) => f.endsWith('.yaml')).sort();
const valueSets: Array<[string, RenderValues]> = [
  ['the defaults', {}],
  ...ciFiles.map((f): [string, RenderValues] => [`ci/${f}`, { files: [`ci/${f}`] }]),
];

type Json = Record<string, unknown>;
interface Container {
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  ports: Array<{ name: string; containerPort: number }>;
  volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean; subPath?: string; subPathExpr?: string }>;
  securityContext?: { seccompProfile?: Json };
  [probe: string]: unknown;
}
interface PodSpec {
  containers: Container[];
  securityContext?: { seccompProfile?: Json };
  volumes: Array<{ name: string; secret?: { secretName: string; defaultMode?: number; items: Array<{ key: string; path: string }> } }>;
}

function find(objects: K8sObject[], kind: string, name = FULLNAME): Json {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
}
const podSpec = (objects: K8sObject[]) => ((find(objects, 'Deployment').spec as Json).template as Json).spec as PodSpec;
const container = (objects: K8sObject[]) => podSpec(objects).containers[0]!;
const configData = (objects: K8sObject[]) => find(objects, 'ConfigMap').data as Record<string, string>;

/** The Secret item behind a file path the ConfigMap names, and how its volume is mounted. */
function secretFile(objects: K8sObject[], file: string | undefined) {
  const mount = container(objects).volumeMounts.find((m) => file !== undefined && m.mountPath === path.posix.dirname(file));
  const volume = podSpec(objects).volumes.find((v) => v.name === mount?.name);
  const item = volume?.secret?.items.find((i) => i.path === path.posix.basename(file ?? ''));
  return { secret: volume?.secret?.secretName, key: item?.key, readOnly: mount?.readOnly };
}

/** helm template that must fail; returns helm's message. */
function renderError(values: RenderValues): string {
  const result = helmTemplate(values);
  expect(result.status, result.stdout).not.toBe(0);
  return result.stderr;
}

describe(`helm chart rendered by helm ${HELM_VERSION} (offline)`, () => {
  it(`runs the pinned helm ${HELM_VERSION} (SHA-256 checked before use)`, () => {
    const result = helm(['version', '--short']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^${HELM_VERSION.replaceAll('.', '\\.')}\\+`));
  });

  it.each(valueSets)('passes helm lint --strict with %s', (_label, values) => {
    const result = helm(['lint', '--strict', CHART_DIR, ...valueArgs(values)]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('0 chart(s) failed');
  });

  it.each(valueSets)('renders %s into objects the Kubernetes and CRD models accept, with no null fields', (_label, values) => {
    const objects = renderChart(values);
    expect(objects.length).toBeGreaterThan(5);
    expect(objects.flatMap(manifestProblems)).toEqual([]);
  });

  it('covers every kind the chart can make across the defaults and the ci/ files', () => {
    const kinds = new Set(valueSets.flatMap(([, values]) => renderChart(values).map((o) => `${o.apiVersion}/${o.kind}`)));
    expect([...kinds].sort()).toEqual([...MODELS.keys()].sort());
  });

  it('reports a null field and a wrong type as problems (the validation above can fail)', () => {
    const deployment = structuredClone(find(renderChart(), 'Deployment')) as K8sObject;
    const spec = (deployment.spec as Json).template as { spec: PodSpec };
    (spec.spec.containers[0] as unknown as Json).env = null;
    (deployment.spec as Json).replicas = 'two';
    expect(manifestProblems(deployment)).toEqual([
      expect.stringMatching(/^Deployment risk-conversation-risk: .*replicas must be integer/),
      `Deployment ${FULLNAME}: .spec.template.spec.containers[0].env is null`,
    ]);
  });
});

describe('helm chart rules (checked on the rendered manifests)', () => {
  it('renders the container env only when it has entries, and then as a list', () => {
    expect(container(renderChart())).not.toHaveProperty('env');
    expect(container(renderChart({ set: { 'webhooks.secret': 'whsec_c2lnbmluZy1zZWNyZXQ=' } }))).not.toHaveProperty('env');
    const withExtra = container(renderChart({ set: { 'extraEnv[0].name': 'NODE_OPTIONS', 'extraEnv[0].value': '--enable-source-maps' } }));
    expect(withExtra.env).toEqual([{ name: 'NODE_OPTIONS', value: '--enable-source-maps' }]);
  });

  it('refuses an HPA with both targetCPU and targetMemory at 0 (it would have no metric), naming both values', () => {
    const message = renderError({
      set: { 'autoscaling.hpa.enabled': true, 'autoscaling.hpa.targetCPU': 0, 'autoscaling.hpa.targetMemory': 0 },
    });
    expect(message).toContain('autoscaling.hpa.enabled needs autoscaling.hpa.targetCPU or autoscaling.hpa.targetMemory above 0');
  });

  it('gives the HPA one metric per non-zero target', () => {
    const objects = renderChart({ set: { 'autoscaling.hpa.enabled': true, 'autoscaling.hpa.targetCPU': 0, 'autoscaling.hpa.targetMemory': 75 } });
    const hpa = find(objects, 'HorizontalPodAutoscaler') as K8sObject;
    expect(manifestProblems(hpa)).toEqual([]);
    expect((hpa.spec as Json).metrics).toEqual([
      { type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 75 } } },
    ]);
  });

  it('takes every container port from values: PORT and HTTP_PORT, container ports, Service targetPorts, probes and the NetworkPolicy', () => {
    const values = { set: { 'containerPorts.https': 9443, 'containerPorts.http': 9080, 'metrics.containerPort': 9565, 'config.httpRedirect': true } };
    const objects = renderChart(values);
    expect(configData(objects)).toMatchObject({ PORT: '9443', HTTP_PORT: '9080', METRICS_PORT: '9565' });
    const ports = { https: 9443, http: 9080, metrics: 9565 };
    expect(Object.fromEntries(container(objects).ports.map((p) => [p.name, p.containerPort]))).toEqual(ports);
    const servicePorts = ((find(objects, 'Service').spec as Json).ports as Array<{ name: string; targetPort: number }>);
    expect(Object.fromEntries(servicePorts.map((p) => [p.name, p.targetPort]))).toEqual(ports);
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      expect((container(objects)[probe] as { httpGet: { port: number } }).httpGet.port, probe).toBe(9443);
    }
    const ingress = (find(objects, 'NetworkPolicy').spec as Json).ingress as Array<{ ports: Array<{ port: number }> }>;
    expect(ingress.flatMap((rule) => rule.ports.map((p) => p.port))).toEqual([9443, 9080, 9565]);
    expect(helmTemplate(values).stdout).not.toMatch(/\b(8443|8080)\b/);
  });

  it('generates a new API key on every helm template, so the chart README and values.yaml point GitOps users to auth.existingSecret', () => {
    const apiKeys = () => (find(renderChart(), 'Secret', `${FULLNAME}-api-keys`).data as Json)['api-keys'];
    expect(apiKeys()).not.toBe(apiKeys());
    const readme = readFileSync(path.join(CHART_DIR, 'README.md'), 'utf8');
    const gitops = /^## API keys with GitOps[^\n]*\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
    expect(gitops).toMatch(/lookup/);
    expect(gitops).toMatch(/helm template/);
    expect(gitops).toMatch(/Argo CD/);
    expect(gitops).toMatch(/`auth\.existingSecret: /);
    const valuesText = readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8');
    const authComment = /((?:^##[^\n]*\n)+)auth:\n/m.exec(valuesText)?.[1] ?? '';
    expect(authComment).toMatch(/helm template/);
    expect(authComment).toMatch(/GitOps/);
    expect(authComment).toMatch(/auth\.existingSecret/);
  });

  it('renders byte-identical manifests twice with auth.existingSecret (nothing rotates on a GitOps sync)', () => {
    const values = { files: ['ci/hardened-existing-secrets-values.yaml'] };
    expect(helmTemplate(values).stdout).toBe(helmTemplate(values).stdout);
  });

  it.each([
    ['a chart-made Secret', { 'webhooks.secret': 'whsec_c2lnbmluZy1zZWNyZXQ=' }, `${FULLNAME}-webhook`, 'webhook-secret'],
    ['an existing Secret', { 'webhooks.existingSecret': 'hooks', 'webhooks.existingSecretKey': 'signing' }, 'hooks', 'signing'],
  ])('mounts the webhook signing secret from %s as a file named by WEBHOOK_SECRET_FILE, never as an environment variable', (_label, set, secretName, key) => {
    const objects = renderChart({ set });
    const file = configData(objects).WEBHOOK_SECRET_FILE;
    expect(file).toMatch(/^\/etc\/conversation-risk\/webhook\//);
    const mount = container(objects).volumeMounts.find((m) => m.mountPath === path.posix.dirname(file!));
    expect(mount).toMatchObject({ readOnly: true });
    const volume = podSpec(objects).volumes.find((v) => v.name === mount!.name);
    expect(volume?.secret).toMatchObject({ secretName, items: [{ key, path: path.posix.basename(file!) }] });
    expect(helmTemplate({ set }).stdout).not.toMatch(/WEBHOOK_SECRET\b(?!_FILE)/);
  });

  it('sets no WEBHOOK_SECRET_FILE and mounts no webhook volume without a webhook secret', () => {
    const objects = renderChart();
    expect(configData(objects)).not.toHaveProperty('WEBHOOK_SECRET_FILE');
    expect(podSpec(objects).volumes.map((v) => v.name)).not.toContain('webhook');
  });

  it('mounts the audit hash key from config.auditHashKey.existingSecret as the file AUDIT_HASH_KEY_FILE names, never as an environment variable', () => {
    const set = { 'config.auditHashKey.existingSecret': 'audit', 'config.auditHashKey.existingSecretKey': 'hmac-key' };
    const objects = renderChart({ set });
    const file = configData(objects).AUDIT_HASH_KEY_FILE;
    expect(file).toBe('/etc/conversation-risk/audit-hash-key/hmac-key');
    expect(secretFile(objects, file)).toEqual({ secret: 'audit', key: 'hmac-key', readOnly: true });
    expect(container(objects)).not.toHaveProperty('env');
    // The key is the operator's (kept as long as the logs hashed under it): the chart makes no Secret for it.
    expect(objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name)).toEqual([`${FULLNAME}-api-keys`]);
    // The default item name, and the production-like example that names a Secret.
    expect(configData(renderChart({ set: { 'config.auditHashKey.existingSecret': 'audit' } })).AUDIT_HASH_KEY_FILE).toBe('/etc/conversation-risk/audit-hash-key/audit-hash-key');
    const hardened = renderChart({ files: ['ci/hardened-existing-secrets-values.yaml'] });
    expect(secretFile(hardened, configData(hardened).AUDIT_HASH_KEY_FILE)).toEqual({ secret: 'conversation-risk-audit', key: 'audit-hash-key', readOnly: true });
  });

  it('sets no AUDIT_HASH_KEY_FILE and mounts no audit key volume without config.auditHashKey.existingSecret (audit lines keep the plain SHA-256)', () => {
    for (const objects of [renderChart(), renderChart({ set: { 'config.auditLog': true } })]) {
      expect(configData(objects)).not.toHaveProperty('AUDIT_HASH_KEY_FILE');
      expect(podSpec(objects).volumes.map((v) => v.name)).not.toContain('audit-hash-key');
    }
  });

  it('passes config.keepAliveTimeoutMs as KEEP_ALIVE_TIMEOUT_MS, and tls.reloadIntervalMs as TLS_RELOAD_INTERVAL_MS where the pods read a TLS Secret', () => {
    expect(configData(renderChart())).toMatchObject({ KEEP_ALIVE_TIMEOUT_MS: '5000' });
    expect(configData(renderChart({ set: { 'config.keepAliveTimeoutMs': 65000 } }))).toMatchObject({ KEEP_ALIVE_TIMEOUT_MS: '65000' });
    expect(configData(renderChart({ set: { 'tls.existingSecret': 'my-tls' } }))).toMatchObject({ TLS_RELOAD_INTERVAL_MS: '60000' });
    // Helm reads YAML numbers as float64: 3600000 must reach the pod as 3600000, not 3.6e+06.
    const hourly = { files: ['ci/cert-manager-values.yaml'], set: { 'tls.reloadIntervalMs': 3600000 } };
    expect(configData(renderChart(hourly))).toMatchObject({ TLS_RELOAD_INTERVAL_MS: '3600000' });
    // Self-signed per pod, or TLS off: no files to read again.
    expect(configData(renderChart())).not.toHaveProperty('TLS_RELOAD_INTERVAL_MS');
    expect(configData(renderChart({ files: ['ci/tls-off-behind-mesh-values.yaml'] }))).not.toHaveProperty('TLS_RELOAD_INTERVAL_MS');
  });

  it.each([
    ['tls.existingSecret', { files: ['ci/hardened-existing-secrets-values.yaml'] }],
    ['cert-manager', { files: ['ci/cert-manager-values.yaml'] }],
  ])('with %s, mounts every Secret as a directory, never with subPath, so a renewed certificate reaches the running pod', (_label, values) => {
    const objects = renderChart(values);
    // The kubelet updates a secret volume in place; a subPath file keeps the content it started with.
    expect(container(objects).volumeMounts.filter((m) => m.subPath !== undefined || m.subPathExpr !== undefined)).toEqual([]);
    const data = configData(objects);
    expect(secretFile(objects, data.TLS_CERT_FILE)).toMatchObject({ key: 'tls.crt', readOnly: true });
    expect(secretFile(objects, data.TLS_KEY_FILE)).toMatchObject({ key: 'tls.key', readOnly: true });
    expect(Number(data.TLS_RELOAD_INTERVAL_MS)).toBeGreaterThan(0);
  });

  it('writes every variable the service reads (src/config.ts) into the ConfigMap, apart from those left out on purpose, and no other', () => {
    const objects = renderChart({
      set: {
        'config.publicHost': 'risk.example',
        'config.httpRedirect': true,
        'tls.existingSecret': 'my-tls',
        'webhooks.secret': 'whsec_c2lnbmluZy1zZWNyZXQ=',
        'config.auditHashKey.existingSecret': 'audit',
        'redis.enabled': true,
        'redis.existingSecret': 'redis',
        'networkPolicy.enabled': false,
      },
    });
    const leftOut: Record<string, string> = {
      API_KEYS: 'a Secret file: API_KEYS_FILE',
      WEBHOOK_SECRET: 'a Secret file: WEBHOOK_SECRET_FILE',
      REDIS_URL: 'holds a password, so a Secret file: REDIS_URL_FILE',
      METRICS_HOST: 'HOST, the service default',
      MODEL_DIR: "the image's model; a retrained one comes with extraVolumes and extraEnv",
      MODEL_SHA256: 'extraEnv, with the model it pins',
    };
    const data = configData(objects);
    const read = Object.keys(configSchema.properties);
    expect(read.filter((name) => !(name in data) && !(name in leftOut))).toEqual([]);
    expect(Object.keys(leftOut).filter((name) => name in data || !read.includes(name))).toEqual([]);
    expect(Object.keys(data).filter((name) => !read.includes(name))).toEqual([]);
  });

  it('sets PUBLIC_HOST only when config.publicHost is given', () => {
    expect(configData(renderChart())).not.toHaveProperty('PUBLIC_HOST');
    expect(configData(renderChart({ set: { 'config.publicHost': 'risk.example' } }))).toMatchObject({ PUBLIC_HOST: 'risk.example' });
  });

  it('keeps a stopping pod serving for preStopSleepSeconds before SIGTERM, within the grace period', () => {
    expect(container(renderChart()).lifecycle).toEqual({ preStop: { exec: { command: ['sleep', '5'] } } });
    expect(container(renderChart({ set: { preStopSleepSeconds: 0 } }))).not.toHaveProperty('lifecycle');
    // 30 s of grace hold a 5 s sleep and 10 s of drain, not a 25 s sleep and 10 s of drain.
    expect(renderError({ set: { preStopSleepSeconds: 25 } })).toContain('terminationGracePeriodSeconds must exceed preStopSleepSeconds plus config.shutdownGraceMs');
  });

  it('refuses a first webhook retry delay longer than the retry budget, as the service would at start', () => {
    expect(renderError({ set: { 'webhooks.retryBaseMs': 7_200_000 } })).toContain('webhooks.retryBaseMs must not exceed webhooks.maxRetryMs');
    expect(() => renderChart({ set: { 'webhooks.retryBaseMs': 3_600_000 } })).not.toThrow();
  });

  it('lets a degraded pod start: the startup probe asks /livez, readiness asks /readyz', () => {
    const c = container(renderChart());
    expect((c.startupProbe as { httpGet: { path: string } }).httpGet.path).toBe('/livez');
    expect((c.livenessProbe as { httpGet: { path: string } }).httpGet.path).toBe('/livez');
    expect((c.readinessProbe as { httpGet: { path: string } }).httpGet.path).toBe('/readyz');
  });

  it('fails once with every validation problem listed, not only the first', () => {
    const message = renderError({
      set: {
        'tls.certManager.enabled': true,
        'tls.existingSecret': 'tls',
        'autoscaling.hpa.enabled': true,
        'autoscaling.hpa.minReplicas': 4,
        'autoscaling.hpa.maxReplicas': 2,
        'autoscaling.hpa.targetCPU': 0,
        'redis.enabled': true,
        terminationGracePeriodSeconds: 15,
        'metrics.containerPort': 8443,
      },
    });
    const expected = [
      'tls.certManager.enabled needs tls.certManager.issuerRef.name',
      'set tls.existingSecret or tls.certManager.enabled, not both',
      'autoscaling.hpa.maxReplicas must be >= minReplicas',
      'autoscaling.hpa.enabled needs autoscaling.hpa.targetCPU or autoscaling.hpa.targetMemory above 0',
      'redis.enabled needs redis.existingSecret',
      'redis.enabled with networkPolicy.enabled needs redis.egress (or networkPolicy.extraEgress)',
      'terminationGracePeriodSeconds must exceed preStopSleepSeconds plus config.shutdownGraceMs',
      'the container ports in use must differ: {"containerPorts.https":8443,"metrics.containerPort":8443}',
    ];
    expect(message).toContain(`${expected.length} problem(s) in the values:`);
    for (const problem of expected) expect(message).toContain(`\n- ${problem}`);
    expect(message.match(/execution error/g)).toHaveLength(1);
  });

  // config.workers against resources.limits.cpu, in every form a CPU quantity takes in values.
  it.each([
    ['3 workers, limit "2" (the default)', { 'config.workers': 3 }, 'config.workers (3) is above resources.limits.cpu (2 cores)'],
    ['2 workers, limit 1500m', { 'resources.limits.cpu': '1500m' }, 'config.workers (2) is above resources.limits.cpu (1500m = 1.5 cores)'],
    ['2 workers, limit 1.5', { 'resources.limits.cpu': 1.5 }, 'config.workers (2) is above resources.limits.cpu (1.5 cores)'],
    ['5 workers, limit 4 (from ci/)', { 'config.workers': 5 }, 'config.workers (5) is above resources.limits.cpu (4 cores)', ['ci/hardened-existing-secrets-values.yaml']],
  ])('refuses config.workers above the CPU limit: %s', (_label, set, message, files = []) => {
    expect(renderError({ files, set })).toContain(`\n- ${message}: run one scoring worker per core of the CPU limit`);
  });

  it.each([
    ['2 workers, limit "2"', {}],
    ['2 workers, limit 2000m', { 'resources.limits.cpu': '2000m' }],
    ['1 worker, limit 1500m', { 'resources.limits.cpu': '1500m', 'config.workers': 1 }],
    ['1 worker, limit 2.5', { 'resources.limits.cpu': 2.5, 'config.workers': 1 }],
    ['2 workers, no CPU limit', { 'resources.limits.cpu': 'null' }],
  ])('renders config.workers at or below the CPU limit: %s', (_label, set) => {
    const result = helmTemplate({ set });
    expect(result.status, result.stderr).toBe(0);
  });

  it('renders the Secret files readable by the container user: group-readable with the pod security context (fsGroup), readable by all without it', () => {
    const modes = (objects: ReturnType<typeof renderChart>) => podSpec(objects).volumes.flatMap((v) => (v.secret ? [v.secret.defaultMode] : []));
    expect(modes(renderChart())).toEqual([0o440]);
    expect(modes(renderChart({ set: { 'podSecurityContext.enabled': false } }))).toEqual([0o444]);
  });

  it.each(['podSecurityContext', 'containerSecurityContext'])(
    'takes a Localhost seccomp profile in %s only with its localhostProfile, and a localhostProfile only with Localhost (as Kubernetes does)',
    (ctx) => {
      const objects = renderChart({ set: { [`${ctx}.seccompProfile.type`]: 'Localhost', [`${ctx}.seccompProfile.localhostProfile`]: 'profiles/conversation-risk.json' } });
      const rendered = ctx === 'podSecurityContext' ? podSpec(objects).securityContext : container(objects).securityContext;
      expect(rendered?.seccompProfile).toEqual({ type: 'Localhost', localhostProfile: 'profiles/conversation-risk.json' });
      expect(renderError({ set: { [`${ctx}.seccompProfile.type`]: 'Localhost' } })).toMatch(/seccompProfile.*missing propert.*localhostProfile/);
      expect(renderError({ set: { [`${ctx}.seccompProfile.localhostProfile`]: 'profiles/conversation-risk.json' } })).toMatch(/seccompProfile\/localhostProfile'?: false schema/);
    },
  );

  it('refuses two Service ports of one number (the API server would refuse the Service), naming them', () => {
    expect(renderError({ set: { 'service.ports.metrics': 443 } })).toContain('\n- the Service ports in use must differ: {"service.ports.https":443,"service.ports.metrics":443}');
    // The redirect's port counts only when the redirect is served.
    const result = helmTemplate({ set: { 'service.ports.http': 443, 'config.httpRedirect': false } });
    expect(result.status, result.stderr).toBe(0);
  });

  it('refuses a CPU limit it cannot compare with config.workers, saying which forms it reads', () => {
    expect(renderError({ set: { 'resources.limits.cpu': '2k' } })).toContain('resources.limits.cpu "2k": give cores ("2", 1.5) or millicores ("1500m")');
  });

  it.each(['serviceMonitor', 'prometheusRule', 'grafanaDashboard'])(
    'refuses metrics.%s.enabled with metrics.enabled false instead of dropping it silently',
    (name) => {
      const message = renderError({ set: { 'metrics.enabled': false, [`metrics.${name}.enabled`]: true } });
      expect(message).toContain(`\n- metrics.${name}.enabled needs metrics.enabled`);
    },
  );

  it('refuses a critical certificate alert that would fire before the warning', () => {
    const set = { 'metrics.prometheusRule.enabled': true, 'metrics.prometheusRule.certificateExpiryCriticalDays': 14 };
    expect(renderError({ set })).toContain('metrics.prometheusRule.certificateExpiryCriticalDays must be below certificateExpiryWarningDays');
  });

  const hashedKey = 'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
  it.each([
    ['a generated key', {}, /export API_KEY="\$\(kubectl -n trust-safety get secret risk-conversation-risk-api-keys /],
    ['plaintext auth.apiKeys', { 'auth.apiKeys[0]': 'k'.repeat(32) }, /export API_KEY="\$\(kubectl -n trust-safety get secret risk-conversation-risk-api-keys /],
    ['hashed auth.apiKeys', { 'auth.apiKeys[0]': hashedKey }, /export API_KEY='<your plaintext key>'/],
    ['auth.existingSecret', { 'auth.existingSecret': 'keys' }, /export API_KEY="\$\(kubectl -n trust-safety get secret keys [^\n]*\n[^\n]*\n\s+export API_KEY='<your plaintext key>'/],
  ])('NOTES.txt says how to set API_KEY with %s, and its curl sends it as a Bearer token with a multi-turn conversation', (_label, set, howToSetKey) => {
    const notes = renderNotes({ set });
    expect(notes).toMatch(howToSetKey);
    const curl = /^\s+curl [^\n]*\\\n\s+-d '([^']+)'/m.exec(notes);
    expect(curl?.[0]).toContain('-H "Authorization: Bearer $API_KEY"');
    const body = JSON.parse(curl![1]!) as { conversation: string };
    const turns = body.conversation.split('\n');
    expect(turns.length).toBeGreaterThanOrEqual(4);
    expect(new Set(turns.map((t) => t.split(':')[0])).size).toBe(2);
    expect(body.conversation).not.toMatch(/^user1: hi\nuser2: hello$/);
  });
});

describe('helm test pod: scores a fixture chat with an API key, the certificate verified', () => {
  const TEST = `${FULLNAME}-test-predict`;
  const HOST = `${FULLNAME}.trust-safety.svc`;
  interface TestPod {
    metadata: { labels: Record<string, string>; annotations: Record<string, string> };
    spec: PodSpec & { volumes: Array<{ name: string; configMap?: { name: string }; secret?: { secretName: string; optional?: boolean; items: Array<{ key: string; path: string }> } }> };
  }
  function testObjects(values: RenderValues = {}) {
    const objects = renderChart(values);
    const pod = find(objects, 'Pod', TEST) as unknown as TestPod;
    const c = pod.spec.containers[0]!;
    const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value]));
    const volume = (name: string) => pod.spec.volumes.find((v) => v.name === name);
    const fileAt = (file: string | undefined) => {
      // The volume behind an env path, and the Secret item it reads.
      const mount = c.volumeMounts.find((m) => file?.startsWith(`${m.mountPath}/`));
      const item = volume(mount?.name ?? '')?.secret?.items.find((i) => i.path === path.posix.basename(file ?? ''));
      return { secret: volume(mount?.name ?? '')?.secret?.secretName, key: item?.key, readOnly: mount?.readOnly };
    };
    return { objects, pod, c, env, volume, fileAt, configMap: find(objects, 'ConfigMap', TEST) };
  }
  const script = () => readFileSync(path.join(CHART_DIR, 'files/helm-test-predict.mjs'), 'utf8');

  it('runs files/helm-test-predict.mjs from a hook ConfigMap created before the pod: POST /predict with a Bearer key, no longer a /readyz check', () => {
    const { pod, c, configMap, objects } = testObjects();
    expect(objects.map((o) => o.metadata.name)).not.toContain(`${FULLNAME}-test-readyz`);
    expect((configMap.data as Record<string, string>)['predict.mjs']).toBe(script());
    const hooks = [configMap.metadata as { annotations: Record<string, string> }, pod.metadata];
    for (const meta of hooks) expect(meta.annotations['helm.sh/hook']).toBe('test');
    expect(Number(hooks[0]!.annotations['helm.sh/hook-weight'])).toBeLessThan(Number(hooks[1]!.annotations['helm.sh/hook-weight']));
    const mount = c.volumeMounts.find((m) => m.name === 'script');
    expect((c as unknown as { command: string[] }).command).toEqual(['node', `${mount!.mountPath}/predict.mjs`]);
    expect(script()).toMatch(/path: '\/predict'/);
    expect(script()).toMatch(/method: 'POST'/);
    expect(script()).toMatch(/authorization: `Bearer \$\{key\}`/);
    expect(script()).not.toMatch(/readyz/);
  });

  it('asks the Service by the name its certificate holds, from a pod the NetworkPolicy admits and the Service does not select', () => {
    const { pod, env } = testObjects();
    expect(env).toMatchObject({ TEST_SCHEME: 'https', TEST_HOST: HOST, TEST_PORT: '443', TEST_SERVER_NAME: HOST });
    expect(pod.metadata.labels[`${FULLNAME}-client`]).toBe('true');
    expect(pod.metadata.labels).not.toHaveProperty('app.kubernetes.io/name');
    expect(testObjects({ set: { 'tests.serverName': 'risk.internal.example' } }).env.TEST_SERVER_NAME).toBe('risk.internal.example');
  });

  it.each([
    ['the generated or auth.apiKeys Secret', {}, `${FULLNAME}-api-keys`, 'api-keys'],
    ['auth.existingSecret', { 'auth.existingSecret': 'keys', 'auth.existingSecretKey': 'k' }, 'keys', 'k'],
    ['tests.apiKey.existingSecret (hashed keys elsewhere)', { 'auth.existingSecret': 'keys', 'tests.apiKey.existingSecret': 'helm-test-key' }, 'helm-test-key', 'api-key'],
  ])('reads the API key from %s', (_label, set, secret, key) => {
    const { env, fileAt } = testObjects({ set });
    expect(fileAt(env.API_KEYS_FILE)).toEqual({ secret, key, readOnly: true });
  });

  it.each([
    ['tls.existingSecret', { set: { 'tls.existingSecret': 'my-tls' } }, 'my-tls'],
    ['cert-manager', { files: ['ci/cert-manager-values.yaml'] }, `${FULLNAME}-tls`],
  ])('with %s, verifies against the TLS Secret\'s ca.crt (or pins its tls.crt), and never mounts tls.key', (_label, values, secret) => {
    const { env, fileAt, volume, objects, pod } = testObjects(values);
    expect(fileAt(env.TLS_CA_FILE)).toEqual({ secret, key: 'ca.crt', readOnly: true });
    expect(fileAt(env.TLS_CERT_FILE)).toEqual({ secret, key: 'tls.crt', readOnly: true });
    // ca.crt is absent from `kubectl create secret tls` and ACME certificates: optional, the script pins tls.crt then.
    expect(volume('tls')?.secret).toMatchObject({ optional: true, items: [{ key: 'ca.crt', path: 'ca.crt' }, { key: 'tls.crt', path: 'tls.crt' }] });
    expect(JSON.stringify(pod)).not.toContain('tls.key');
    const certificate = objects.find((o) => o.kind === 'Certificate');
    if (certificate) expect((certificate.spec as { dnsNames: string[] }).dnsNames).toContain(env.TEST_SERVER_NAME);
  });

  it('with self-signed pods (no TLS Secret) mounts no CA: the script says the certificate is not verified; with TLS off it asks over HTTP', () => {
    const selfSigned = testObjects();
    expect(selfSigned.env).not.toHaveProperty('TLS_CA_FILE');
    expect(selfSigned.volume('tls')).toBeUndefined();
    expect(script()).toMatch(/WARNING: \$\{verified\}/);
    const plain = testObjects({ files: ['ci/tls-off-behind-mesh-values.yaml'] });
    expect(plain.env.TEST_SCHEME).toBe('http');
    expect(plain.volume('tls')).toBeUndefined();
  });

  it('is the test docs/deployment.md describes, and the image HEALTHCHECK no longer says it is one', () => {
    const root = path.join(CHART_DIR, '../..');
    const docs = readFileSync(path.join(root, 'docs/deployment.md'), 'utf8');
    const helmSection = /^## Helm\n([\s\S]*?)^## /m.exec(docs)?.[1] ?? '';
    const testLines = helmSection.split('\n').filter((l) => /helm test/.test(l));
    expect(testLines.length).toBeGreaterThan(0);
    expect(testLines.join('\n')).not.toMatch(/readyz/);
    expect(helmSection).toMatch(/POSTs a fixture chat to \/predict/);
    // Its install keeps only sha256: hashes in the keys Secret: the test needs a plaintext key of its own.
    expect(helmSection).toMatch(/--set tests\.apiKey\.existingSecret=conversation-risk-helm-test-key/);
    // The test pod runs files/helm-test-predict.mjs; scripts/container/healthcheck.mjs is the image's HEALTHCHECK only.
    const rendered = helmTemplate({}).stdout;
    expect(rendered).not.toContain('healthcheck.mjs');
    const header = readFileSync(path.join(root, 'scripts/container/healthcheck.mjs'), 'utf8').split('\n').filter((l) => l.startsWith('//')).join('\n');
    expect(header).not.toMatch(/HEALTHCHECK and `helm test` probe|Service name in helm test/);
  });

  it('renders no test objects with tests.enabled false', () => {
    const names = renderChart({ set: { 'tests.enabled': false } }).map((o) => o.metadata.name);
    expect(names).not.toContain(TEST);
  });
});
