// The Helm chart and compose files, checked without helm (none can be installed here):
// values files against values.schema.json, the schema's strictness, the documentation of every
// value, the values and metric names the templates use, and that the static YAML parses.
// scripts/helm/check.sh adds `helm lint` and `helm template | kubeconform` where those tools exist.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse, parseDocument } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { renderReadme } from '../../scripts/helm/params-table.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CHART = path.join(ROOT, 'helm/conversation-risk');
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const read = (p: string) => readFileSync(path.join(ROOT, p), 'utf8');
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => structuredClone(v);

/** Helm's merge of a user values file over the chart defaults: maps merge, everything else replaces. */
function merge(base: Json, over: Json): Json {
  if (!isObject(base) || !isObject(over)) return clone(over);
  const out: JsonObject = clone(base);
  for (const [k, v] of Object.entries(over)) out[k] = k in out ? merge(out[k] as Json, v) : clone(v);
  return out;
}

/** Dotted paths of values.yaml's leaves: scalars, lists and maps that are empty or of plain strings. */
function leafPaths(value: Json, prefix = ''): string[] {
  if (!isObject(value)) return [prefix];
  const entries = Object.entries(value);
  const isStringMap = entries.length === 0 || entries.every(([k, v]) => typeof v === 'string' && /[./]/.test(k));
  if (isStringMap && prefix !== '') return [prefix];
  return entries.flatMap(([k, v]) => leafPaths(v, prefix === '' ? k : `${prefix}.${k}`));
}

function hasPath(value: Json, dotted: string): boolean {
  let node: Json = value;
  for (const part of dotted.split('.')) {
    if (!isObject(node) || !(part in node)) return false;
    node = node[part] as Json;
  }
  return true;
}

const valuesText = readFileSync(path.join(CHART, 'values.yaml'), 'utf8');
const defaults = parse(valuesText) as JsonObject;
const schema = JSON.parse(readFileSync(path.join(CHART, 'values.schema.json'), 'utf8')) as JsonObject;
const ciFiles = readdirSync(path.join(CHART, 'ci')).filter((f) => f.endsWith('.yaml'));
const templateDir = path.join(CHART, 'templates');
const templates = readdirSync(templateDir, { recursive: true, encoding: 'utf8' })
  .filter((f) => /\.(yaml|tpl|txt)$/.test(f))
  .map((f) => ({ name: f, text: readFileSync(path.join(templateDir, f), 'utf8') }));

describe('helm values schema', () => {
  let validate: ValidateFunction;
  beforeAll(() => {
    validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
  });
  const errors = () => JSON.stringify(validate.errors, null, 1);

  it('accepts the chart defaults in values.yaml', () => {
    expect(validate(defaults), errors()).toBe(true);
  });

  it.each(ciFiles)('accepts the example values ci/%s merged over the defaults', (file) => {
    const over = parse(readFileSync(path.join(CHART, 'ci', file), 'utf8')) as JsonObject;
    expect(validate(merge(defaults, over)), errors()).toBe(true);
  });

  const bad: Array<[string, (v: JsonObject) => void, string]> = [
    ['an unknown top-level key', (v) => (v.replicas = 3), 'additionalProperties'],
    ['an unknown nested key', (v) => ((v.containerSecurityContext as JsonObject).runAsRoot = true), 'additionalProperties'],
    ['a misspelt probe field', (v) => ((v.livenessProbe as JsonObject).periodSecond = 5), 'additionalProperties'],
    ['a string where an integer belongs', (v) => (v.replicaCount = 'two'), 'type'],
    ['a boolean given as a string', (v) => ((v.networkPolicy as JsonObject).enabled = 'true'), 'type'],
    ['running as root (uid 0)', (v) => ((v.podSecurityContext as JsonObject).runAsUser = 0), 'minimum'],
    ['an unknown service type', (v) => ((v.service as JsonObject).type = 'ExternalName'), 'enum'],
    ['a webhook secret without the whsec_ prefix', (v) => ((v.webhooks as JsonObject).secret = 'c2VjcmV0'), 'pattern'],
    ['a webhook host without a port', (v) => ((v.webhooks as JsonObject).allowedHosts = ['hooks.example']), 'pattern'],
    ['an image digest that is not sha256', (v) => ((v.image as JsonObject).digest = 'latest'), 'pattern'],
    ['a short API key', (v) => ((v.auth as JsonObject).apiKeys = ['secret']), 'minLength'],
    ['a webhook egress rule without ports', (v) => ((v.networkPolicy as JsonObject).webhookEgress = [{ cidr: '10.0.0.1/32' }]), 'required'],
    ['a malformed resource quantity', (v) => (((v.resources as JsonObject).limits as JsonObject).memory = '1 gigabyte'), 'oneOf'],
    ['a webhook host with a port above 65535', (v) => ((v.webhooks as JsonObject).allowedHosts = ['hooks.example:99999']), 'pattern'],
    ['a trustProxy that is no address', (v) => ((v.config as JsonObject).trustProxy = 'bogus'), 'pattern'],
    ['a trustProxy CIDR of 99 bits', (v) => ((v.config as JsonObject).trustProxy = '10.0.0.0/99'), 'pattern'],
    ['a trustProxy list with one bad entry', (v) => ((v.config as JsonObject).trustProxy = 'loopback, 10.0.0.300'), 'pattern'],
    ['a trustProxy of colons that is no IPv6 address', (v) => ((v.config as JsonObject).trustProxy = ':::'), 'pattern'],
    ['an API key no Bearer header can carry (non-ASCII)', (v) => ((v.auth as JsonObject).apiKeys = ['schlüssel-0123456789abcdef']), 'pattern'],
    ['a preStop sleep of minutes', (v) => (v.preStopSleepSeconds = 600), 'maximum'],
    ['a result TTL longer than a Node timer holds', (v) => ((v.jobs as JsonObject).resultTtlMs = 2_592_000_000), 'maximum'],
    ['a keep-alive timeout of 0 (the service refuses it)', (v) => ((v.config as JsonObject).keepAliveTimeoutMs = 0), 'minimum'],
    ['a keep-alive timeout given as a string', (v) => ((v.config as JsonObject).keepAliveTimeoutMs = '65000'), 'type'],
    ['a TLS reload interval longer than a Node timer holds', (v) => ((v.tls as JsonObject).reloadIntervalMs = 2_592_000_000), 'maximum'],
    ['a TLS reload interval of 0', (v) => ((v.tls as JsonObject).reloadIntervalMs = 0), 'minimum'],
    ['an audit hash key given inline instead of as a Secret', (v) => ((v.config as JsonObject).auditHashKey = 'k'.repeat(64)), 'type'],
    ['an unknown key under config.auditHashKey', (v) => (((v.config as JsonObject).auditHashKey as JsonObject).key = 'k'.repeat(64)), 'additionalProperties'],
    ['an audit hash key item that is no file name', (v) => (((v.config as JsonObject).auditHashKey as JsonObject).existingSecretKey = '../key'), 'pattern'],
    ['an empty audit hash key item', (v) => (((v.config as JsonObject).auditHashKey as JsonObject).existingSecretKey = ''), 'minLength'],
    ['an API key Secret item that is no file name', (v) => ((v.auth as JsonObject).existingSecretKey = 'api keys'), 'pattern'],
    ['a Redis URL Secret item that is no file name', (v) => ((v.redis as JsonObject).urlKey = 'redis/url'), 'pattern'],
    ['a Redis encryption key Secret item that is no file name', (v) => ((v.redis as JsonObject).encryptionKeyKey = 'key file'), 'pattern'],
    ['a webhook secret item that is no file name', (v) => ((v.webhooks as JsonObject).existingSecretKey = 'a/b'), 'pattern'],
    // Prometheus reads whole numbers of units from y to ms, in order: promtool and the Operator's CRDs refuse the rest.
    ['an alert duration with a fraction (1.5m)', (v) => (((v.metrics as JsonObject).prometheusRule as JsonObject).for = '1.5m'), 'pattern'],
    ['an alert duration with its units out of order (30s1m)', (v) => (((v.metrics as JsonObject).prometheusRule as JsonObject).queueFullFor = '30s1m'), 'pattern'],
    ['a scrape interval with a fraction (0.5m)', (v) => (((v.metrics as JsonObject).serviceMonitor as JsonObject).interval = '0.5m'), 'pattern'],
    ['an empty scrape timeout', (v) => (((v.metrics as JsonObject).serviceMonitor as JsonObject).scrapeTimeout = ''), 'minLength'],
  ];
  it.each(['1m30s', '2h', '1d', '500ms', '1w2d'])('accepts the Prometheus duration %s for an alert', (duration) => {
    const values = clone(defaults);
    ((values.metrics as JsonObject).prometheusRule as JsonObject).for = duration;
    expect(validate(values), errors()).toBe(true);
  });
  // The service's own TRUST_PROXY rules (src/config.ts), so the chart refuses what the pod would.
  it.each(['false', 'true', '2', '10.0.0.0/8', '10.0.0.0/8, loopback', '192.168.1.7,fd00::/8', '::1', '2001:db8::1/64', 'linklocal,uniquelocal'])(
    'accepts trustProxy %s',
    (trustProxy) => {
      const values = clone(defaults);
      (values.config as JsonObject).trustProxy = trustProxy;
      expect(validate(values), errors()).toBe(true);
    },
  );

  it.each(bad)('rejects %s', (_name, mutate, keyword) => {
    const values = clone(defaults);
    mutate(values);
    expect(validate(values)).toBe(false);
    expect(validate.errors?.map((e) => e.keyword)).toContain(keyword);
  });

  it('closes every object: additionalProperties false, typed map values, or a documented Kubernetes pass-through', () => {
    const loose: string[] = [];
    const walk = (node: Json, at: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}[${i}]`));
      if (!isObject(node)) return;
      if (node.type === 'object') {
        const ap = node.additionalProperties;
        const closed = node.properties !== undefined ? ap === false : isObject(ap) || ap === false;
        const passThrough = typeof node.$comment === 'string' && /Kubernetes/.test(node.$comment);
        if (!closed && !passThrough) loose.push(at);
      }
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`);
    };
    walk(schema, '#');
    expect(loose).toEqual([]);
  });

  it('describes exactly the keys values.yaml has', () => {
    const schemaPaths: string[] = [];
    const walk = (node: JsonObject, prefix: string) => {
      const resolved = typeof node.$ref === 'string' ? resolveRef(node.$ref) : node;
      if (!isObject(resolved.properties)) return;
      for (const [k, v] of Object.entries(resolved.properties)) {
        const p = prefix === '' ? k : `${prefix}.${k}`;
        schemaPaths.push(p);
        if (isObject(v)) walk(v, p);
      }
    };
    const resolveRef = (ref: string): JsonObject =>
      ref.replace(/^#\//, '').split('/').reduce<JsonObject>((n, k) => n[k] as JsonObject, schema);
    walk(schema, '');
    // affinity's parts, and a seccomp profile's localhostProfile (only with type Localhost), are
    // optional Kubernetes fields, not chart values.
    const kubernetesOnly = (p: string) => p.startsWith('affinity.') || p.endsWith('.seccompProfile.localhostProfile');
    const missing = schemaPaths.filter((p) => !kubernetesOnly(p) && !hasPath(defaults, p));
    expect(missing).toEqual([]);
  });
});

describe('helm values documentation', () => {
  const params = [...valuesText.matchAll(/^\s*## @param (\S+) (.+)$/gm)].map((m) => ({ path: m[1]!, text: m[2]! }));
  const documented = new Set(params.map((p) => p.path));

  it('has a @param line for every value', () => {
    const undocumented = leafPaths(defaults).filter((leaf) => {
      const parts = leaf.split('.');
      return !parts.some((_, i) => documented.has(parts.slice(0, i + 1).join('.')));
    });
    expect(undocumented).toEqual([]);
  });

  it('documents only values that exist, each once and with a description', () => {
    expect(params.filter((p) => !hasPath(defaults, p.path)).map((p) => p.path)).toEqual([]);
    expect(params.length).toBe(documented.size);
    expect(params.filter((p) => p.text.trim().length < 10).map((p) => p.path)).toEqual([]);
  });

  it('is what the chart README\'s parameter tables show (node scripts/helm/params-table.ts)', () => {
    const readme = readFileSync(path.join(CHART, 'README.md'), 'utf8');
    expect(renderReadme(readme, valuesText)).toBe(readme);
    expect(readme).toContain('| `networkPolicy.enabled` |');
  });

  it('jobs.maxQueuedChars says the budget is shared by every replica with Redis, not "of a pod", in values.yaml, the schema and the README', () => {
    const param = params.find((p) => p.path === 'jobs.maxQueuedChars')!.text;
    const jobs = (schema.properties as JsonObject).jobs as JsonObject;
    const description = ((jobs.properties as JsonObject).maxQueuedChars as JsonObject).description;
    const row = /^\| `jobs\.maxQueuedChars` \| ([^|]+) \|/m.exec(readFileSync(path.join(CHART, 'README.md'), 'utf8'))?.[1];
    for (const text of [param, description, row]) {
      expect(text).not.toMatch(/of a pod/);
      expect(text).toMatch(/redis\.enabled/);
      expect(text).toMatch(/every replica/);
    }
    expect(description).toBe(param);
  });

  it('tls.certManager.renewBefore no longer says to roll the pods: they read the renewed certificate again, in values.yaml, the schema and the README', () => {
    const param = params.find((p) => p.path === 'tls.certManager.renewBefore')!.text;
    const tls = (schema.properties as JsonObject).tls as JsonObject;
    const certManager = (tls.properties as JsonObject).certManager as JsonObject;
    const description = ((certManager.properties as JsonObject).renewBefore as JsonObject).description;
    const readme = readFileSync(path.join(CHART, 'README.md'), 'utf8');
    const row = /^\| `tls\.certManager\.renewBefore` \| ([^|]+) \|/m.exec(readme)?.[1];
    for (const text of [param, description, row]) {
      expect(text).not.toMatch(/roll them|read the certificate at start/);
      expect(text).toMatch(/without a restart/);
      expect(text).toMatch(/tls\.reloadIntervalMs/);
    }
    expect(description).toBe(param);
    // Nowhere else in the chart's prose either.
    for (const [name, text] of [['README.md', readme], ...templates.map((t) => [t.name, t.text])] as Array<[string, string]>) {
      expect(text, name).not.toMatch(/roll (them|the pods) after (the )?renewal|read the certificate (only )?at start/i);
    }
  });

  it('puts each @param right above the value it documents', () => {
    const lines = valuesText.split('\n');
    const misplaced: string[] = [];
    lines.forEach((line, i) => {
      const m = /^(\s*)## @param (\S+)/.exec(line);
      if (!m) return;
      const key = m[2]!.split('.').at(-1)!;
      const next = lines[i + 1] ?? '';
      if (!next.startsWith(`${m[1]}${key}:`)) misplaced.push(m[2]!);
    });
    expect(misplaced).toEqual([]);
  });
});

describe('helm templates (static checks; rendering is scripts/helm/check.sh)', () => {
  it('use only values that values.yaml defines', () => {
    const used = new Set<string>();
    for (const t of templates) {
      for (const m of t.text.matchAll(/\.Values((?:\.[A-Za-z][\w-]*)+)/g)) used.add(m[1]!.slice(1));
    }
    expect(used.size).toBeGreaterThan(40);
    expect([...used].filter((p) => !hasPath(defaults, p))).toEqual([]);
  });

  it('include only named templates that _helpers.tpl defines', () => {
    const defined = new Set([...templates.flatMap((t) => [...t.text.matchAll(/define "([^"]+)"/g)].map((m) => m[1]!))]);
    const included = new Set(templates.flatMap((t) => [...t.text.matchAll(/include "([^"]+)"/g)].map((m) => m[1]!)));
    expect(included.size).toBeGreaterThan(8);
    expect([...included].filter((n) => !defined.has(n))).toEqual([]);
  });

  it('balance their control blocks: every if, with, range and define has its end', () => {
    const unbalanced = templates.filter((t) => {
      const opens = [...t.text.matchAll(/\{\{-?\s*(if|with|range|define)\b/g)].length;
      const ends = [...t.text.matchAll(/\{\{-?\s*end\s*-?\}\}/g)].length;
      return opens !== ends;
    });
    expect(unbalanced.map((t) => t.name)).toEqual([]);
  });

  it('harden the pod: non-root, read-only root, no privilege escalation, no token, checksums roll pods', () => {
    const deployment = templates.find((t) => t.name === 'deployment.yaml')!.text;
    expect(deployment).toMatch(/automountServiceAccountToken: \{\{ \.Values\.automountServiceAccountToken \}\}/);
    expect(deployment).toMatch(/checksum\/config:/);
    expect(deployment).toMatch(/checksum\/secret:/);
    expect(deployment).toMatch(/path: \/livez/);
    expect(deployment).toMatch(/path: \/readyz/);
    expect(defaults.automountServiceAccountToken).toBe(false);
    expect(defaults.containerSecurityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(defaults.podSecurityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect((defaults.networkPolicy as JsonObject).enabled).toBe(true);
    // The image's numeric user (Dockerfile USER) is the one the chart runs as.
    const uid = /^USER (\d+):(\d+)$/m.exec(read('Dockerfile'));
    expect(uid?.[1]).toBe(String((defaults.containerSecurityContext as JsonObject).runAsUser));
  });

  it('name only metrics the service exports', () => {
    const exported = new Set<string>();
    // Every module may register metrics on the shared registry (ops, jobs, TLS, Redis).
    const sourceFiles = readdirSync(path.join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    for (const file of sourceFiles) {
      for (const m of read(`src/${file}`).matchAll(/name: `\$\{PREFIX\}([a-z_]+)`/g)) exported.add(`conversation_risk_${m[1]}`);
    }
    // prom-client's default process metrics, registered with the same prefix.
    for (const n of ['process_resident_memory_bytes', 'process_cpu_seconds_total']) exported.add(`conversation_risk_${n}`);
    const sources = [
      templates.find((t) => t.name === 'prometheusrule.yaml')!.text,
      readFileSync(path.join(CHART, 'files/grafana-dashboard.json'), 'utf8'),
      read('compose/alerts.yml'),
    ].join('\n');
    const named = new Set([...sources.matchAll(/conversation_risk_[a-z_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, '')));
    expect(named.size).toBeGreaterThan(8);
    expect([...named].filter((n) => !exported.has(n))).toEqual([]);
  });

  it('alert on model not loaded, 5xx rate, latency, rate-limit saturation, a full queue, a target down, absent metrics, a dependency down and an expiring certificate', () => {
    const rules = templates.find((t) => t.name === 'prometheusrule.yaml')!.text;
    const alerts = [...rules.matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    expect(alerts).toEqual([
      'ConversationRiskModelNotLoaded',
      'ConversationRiskHighErrorRate',
      'ConversationRiskHighLatency',
      'ConversationRiskRateLimitSaturation',
      'ConversationRiskQueueFull',
      'ConversationRiskTargetDown',
      'ConversationRiskMetricsAbsent',
      'ConversationRiskDependencyDown',
      'ConversationRiskCertificateExpiringSoon',
      'ConversationRiskCertificateExpiryImminent',
    ]);
  });
});

describe('static YAML and JSON files', () => {
  const yamlFiles = [
    'helm/conversation-risk/Chart.yaml',
    'helm/conversation-risk/values.yaml',
    ...ciFiles.map((f) => `helm/conversation-risk/ci/${f}`),
    'compose/compose.yaml',
    'compose/prometheus.yml',
    'compose/alerts.yml',
  ];
  it.each(yamlFiles)('%s parses without errors or warnings', (file) => {
    const doc = parseDocument(read(file), { uniqueKeys: true });
    expect(doc.errors.map((e) => e.message)).toEqual([]);
    expect(doc.warnings.map((e) => e.message)).toEqual([]);
  });

  it('Chart.yaml is a v2 chart whose appVersion is the package version', () => {
    const chart = parse(read('helm/conversation-risk/Chart.yaml')) as JsonObject;
    const pkg = JSON.parse(read('package.json')) as { version: string };
    expect(chart.apiVersion).toBe('v2');
    expect(chart.name).toBe('conversation-risk');
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(chart.appVersion).toBe(pkg.version);
  });

  it('the Grafana dashboard is valid JSON with queries on every panel', () => {
    const dashboard = JSON.parse(readFileSync(path.join(CHART, 'files/grafana-dashboard.json'), 'utf8')) as {
      panels: Array<{ targets: Array<{ expr: string }> }>;
    };
    expect(dashboard.panels.length).toBeGreaterThan(5);
    for (const panel of dashboard.panels) expect(panel.targets.length).toBeGreaterThan(0);
  });

  it('compose runs the appliance hardened: read-only, no capabilities, no new privileges, secrets as files, limits', () => {
    const compose = parse(read('compose/compose.yaml')) as JsonObject;
    const app = (compose.services as JsonObject)['conversation-risk'] as JsonObject;
    expect(app.read_only).toBe(true);
    expect(app.cap_drop).toEqual(['ALL']);
    expect(app.security_opt).toContain('no-new-privileges:true');
    expect(app.tmpfs).toBeDefined();
    expect(app.healthcheck).toBeDefined();
    expect(((app.deploy as JsonObject).resources as JsonObject).limits).toMatchObject({ cpus: expect.anything(), memory: expect.anything() });
    const secrets = (app.secrets as Json[]).map((s) => (isObject(s) ? s.source : s));
    expect(secrets).toEqual(expect.arrayContaining(['api_keys', 'tls_cert', 'tls_key', 'webhook_secret', 'audit_hash_key']));
    const env = app.environment as JsonObject;
    expect(env.API_KEYS_FILE).toMatch(/^\/run\/secrets\//);
    expect(env.WEBHOOK_SECRET_FILE).toMatch(/^\/run\/secrets\//);
    expect(env.AUDIT_HASH_KEY_FILE).toBe('/run/secrets/audit_hash_key');
    // The service's defaults, overridable from the shell or .env like the other settings.
    expect(env.KEEP_ALIVE_TIMEOUT_MS).toBe('${KEEP_ALIVE_TIMEOUT_MS:-5000}');
    expect(env.TLS_RELOAD_INTERVAL_MS).toBe('${TLS_RELOAD_INTERVAL_MS:-60000}');
    expect(env).not.toHaveProperty('WEBHOOK_SECRET');
    expect(env.API_KEYS).toBeUndefined();
    const prometheus = (compose.services as JsonObject).prometheus as JsonObject;
    expect(prometheus.profiles).toEqual(['monitoring']);
  });

  it('compose replicas take every setting of the single appliance, rotate their logs, and are scraped', () => {
    const services = (parse(read('compose/compose.yaml'), { merge: true }) as JsonObject).services as JsonObject;
    const app = services['conversation-risk'] as JsonObject;
    for (const name of ['replica-a', 'replica-b']) {
      const replica = services[name] as JsonObject;
      const env = replica.environment as JsonObject;
      // The redirect's public port and host are the single appliance's only: replicas publish no plain HTTP.
      const shared = Object.keys(app.environment as JsonObject).filter((k) => k !== 'PUBLIC_HTTPS_PORT' && k !== 'PUBLIC_HOST');
      expect(Object.keys(env), name).toEqual(expect.arrayContaining(shared));
      for (const k of shared) expect(env[k], `${name} ${k}`).toEqual((app.environment as JsonObject)[k]);
      expect(replica.logging, name).toEqual(app.logging);
    }
    const scrape = ((parse(read('compose/prometheus.yml')) as JsonObject).scrape_configs as JsonObject[])[0]!;
    const names = (scrape.dns_sd_configs as JsonObject[]).flatMap((c) => c.names as string[]);
    expect(names.sort()).toEqual(['conversation-risk', 'replica-a', 'replica-b']);
  });

  it('compose gives every stopping appliance container at least 20 s more than SHUTDOWN_GRACE_MS before SIGKILL, both from the environment', () => {
    const services = (parse(read('compose/compose.yaml'), { merge: true }) as JsonObject).services as JsonObject;
    const defaultOf = (value: Json, name: string): string => {
      const m = new RegExp(`^\\$\\{${name}:-([^}]+)\\}$`).exec(String(value));
      expect(m, `${name} is read from the environment with a default`).not.toBeNull();
      return m![1]!;
    };
    const seconds = (duration: string): number => {
      const m = /^(\d+)(ms|s|m)$/.exec(duration);
      expect(m, duration).not.toBeNull();
      return Number(m![1]) * { ms: 0.001, s: 1, m: 60 }[m![2] as 'ms' | 's' | 'm'];
    };
    const appliances = Object.entries(services).filter(([, svc]) => isObject((svc as JsonObject).environment) && 'SHUTDOWN_GRACE_MS' in ((svc as JsonObject).environment as JsonObject));
    expect(appliances.map(([name]) => name).sort()).toEqual(['conversation-risk', 'replica-a', 'replica-b']);
    for (const [name, svc] of appliances) {
      const service = svc as JsonObject;
      const drainS = Number(defaultOf((service.environment as JsonObject).SHUTDOWN_GRACE_MS!, 'SHUTDOWN_GRACE_MS')) / 1000;
      const stopS = seconds(defaultOf(service.stop_grace_period!, 'STOP_GRACE_PERIOD'));
      expect(stopS - drainS, name).toBeGreaterThanOrEqual(20);
    }
  });

  it('compose/init-secrets.sh makes every secret file compose.yaml mounts (a usable audit hash key among them), and keeps files that exist', () => {
    const compose = parse(read('compose/compose.yaml')) as JsonObject;
    const files = Object.values(compose.secrets as Record<string, { file: string }>).map((s) => s.file);
    expect(files).toContain('./secrets/audit_hash_key.txt');
    const dir = mkdtempSync(path.join(tmpdir(), 'cr-init-secrets-'));
    try {
      copyFileSync(path.join(ROOT, 'compose/init-secrets.sh'), path.join(dir, 'init-secrets.sh'));
      const runInit = () => execFileSync('bash', [path.join(dir, 'init-secrets.sh')], { encoding: 'utf8', env: { ...process.env, TLS_CN: 'appliance.test' } });
      runInit();
      for (const file of files) expect(statSync(path.join(dir, file), { throwIfNoEntry: false })?.size ?? 0, file).toBeGreaterThan(0);
      // AUDIT_HASH_KEY_FILE: the service wants at least 32 characters on the first line.
      const auditKey = readFileSync(path.join(dir, 'secrets/audit_hash_key.txt'), 'utf8');
      expect(auditKey).toMatch(/^[0-9a-f]{64}\n$/);
      // Run again (after an upgrade, say): what exists is kept, so old audit lines still match.
      const again = runInit();
      expect(readFileSync(path.join(dir, 'secrets/audit_hash_key.txt'), 'utf8')).toBe(auditKey);
      expect(again).not.toMatch(/audit hash key written/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
