// The alert rules, compose/alerts.yml and the chart's PrometheusRule as helm renders it: the same
// alerts in both, monitoring that cannot go blind without a sound (a target down, no metrics at all),
// and the dependency and certificate alerts. promtool checks and unit-tests both rule files, and a real
// Prometheus scrapes the real service on loopback (Debian's `prometheus` package, which .ci/run
// installs; elsewhere those parts are skipped with a message).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAMESPACE, RELEASE, renderChart } from '../helpers/helm.ts';
import { FIXTURE_MODEL_DIR, REPO_ROOT, freePort } from '../helpers/app.ts';
import { startServerProcess, type ServerProcess } from '../helpers/process.ts';
import { until } from '../helpers/wait.ts';

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
interface RuleFile {
  groups: Array<{ name: string; rules: Rule[] }>;
}

const FULLNAME = `${RELEASE}-conversation-risk`;
const composeFile = parse(readFileSync(path.join(REPO_ROOT, 'compose/alerts.yml'), 'utf8')) as RuleFile;
const chartRules = (set: Record<string, string | number | boolean> = {}): RuleFile => {
  const rule = renderChart({ set: { 'metrics.prometheusRule.enabled': true, ...set } }).find((o) => o.kind === 'PrometheusRule');
  if (rule === undefined) throw new Error('no PrometheusRule rendered');
  return rule.spec as RuleFile;
};
const chartFile = chartRules();
const rulesOf = (file: RuleFile) => file.groups.flatMap((g) => g.rules);
const ruleSets: Array<[string, Rule[]]> = [
  ['compose/alerts.yml', rulesOf(composeFile)],
  ["the chart's PrometheusRule", rulesOf(chartFile)],
];

/**
 * An expression without what places its series: the chart selects by namespace and service (the
 * Prometheus Operator's target labels) and keeps namespace and pod in its groupings, compose selects
 * by its scrape job and groups by instance where it names a replica. What remains (metrics, functions, ranges, other matchers, thresholds) must be equal.
 */
function normalizeExpr(expr: string): string {
  return expr
    .replace(/\bby\s*\(([^)]*)\)/g, (_m, list: string) => {
      const kept = list.split(',').map((l) => l.trim()).filter((l) => l !== 'namespace' && l !== 'pod' && l !== 'instance');
      return kept.length === 0 ? '' : `by(${kept.join(',')})`;
    })
    .replace(/\s+/g, '')
    .replace(/(namespace|service|job)="[^"]*",?/g, '')
    .replace(/,}/g, '}')
    .replace(/\{\}/g, '');
}

describe('alert rules: compose and the chart', () => {
  it('the compose rules and the chart PrometheusRule hold the same alerts: names, severity, for and expressions (placing selectors aside)', () => {
    const shape = (rules: Rule[]) =>
      rules.map((r) => ({ alert: r.alert, severity: r.labels.severity, for: r.for, expr: normalizeExpr(r.expr) }));
    expect(shape(rulesOf(chartFile))).toEqual(shape(rulesOf(composeFile)));
    expect(rulesOf(composeFile).length).toBeGreaterThanOrEqual(10);
  });

  it('normalizeExpr removes only the placing selectors (the comparison above can fail)', () => {
    expect(normalizeExpr('max by (namespace, pod) (x{namespace="a", service="b"}) == 0')).toBe('max(x)==0');
    expect(normalizeExpr('sum by (namespace, le) (rate(x{service="b", status=~"5.."}[5m]))')).toBe('sumby(le)(rate(x{status=~"5.."}[5m]))');
    expect(normalizeExpr('up{job="conversation-risk"} == 0')).not.toBe(normalizeExpr('up{job="conversation-risk"} == 1'));
  });

  it.each(ruleSets)('ConversationRiskTargetDown: %s alerts on a scrape target that is down (up == 0)', (_file, rules) => {
    const rule = rules.find((r) => r.alert === 'ConversationRiskTargetDown');
    expect(rule?.expr.trim()).toMatch(/^up\{[^}]+\} == 0$/);
    expect(rule?.labels.severity).toBe('warning');
  });

  it.each(ruleSets)('ConversationRiskMetricsAbsent: %s alerts when no appliance metrics are scraped at all (absent)', (_file, rules) => {
    const rule = rules.find((r) => r.alert === 'ConversationRiskMetricsAbsent');
    expect(rule?.expr.trim()).toMatch(/^absent\(conversation_risk_model_loaded\{[^}]+\}\)$/);
    expect(rule?.labels.severity).toBe('critical');
  });

  it.each(ruleSets)('ConversationRiskDependencyDown: %s alerts, critical after 2m, when conversation_risk_dependency_up is 0', (_file, rules) => {
    const rule = rules.find((r) => r.alert === 'ConversationRiskDependencyDown');
    expect(normalizeExpr(rule?.expr ?? '')).toBe('minby(dependency)(conversation_risk_dependency_up)==0');
    expect(rule).toMatchObject({ for: '2m', labels: { severity: 'critical' } });
  });

  it.each(ruleSets)('ConversationRiskCertificateExpiringSoon (warning, 14 days) and ConversationRiskCertificateExpiryImminent (critical, 3 days): %s', (_file, rules) => {
    const expiry = (days: number) => `min(conversation_risk_tls_certificate_expiry_timestamp_seconds)-time()<${days}*86400`;
    const soon = rules.find((r) => r.alert === 'ConversationRiskCertificateExpiringSoon');
    const imminent = rules.find((r) => r.alert === 'ConversationRiskCertificateExpiryImminent');
    expect(normalizeExpr(soon?.expr ?? '')).toBe(expiry(14));
    expect(soon?.labels.severity).toBe('warning');
    expect(normalizeExpr(imminent?.expr ?? '')).toBe(expiry(3));
    expect(imminent?.labels.severity).toBe('critical');
  });

  it('without TLS (tls.enabled=false) the chart holds no certificate alerts: the pods serve no certificate', () => {
    const names = rulesOf(chartRules({ 'tls.enabled': false })).map((r) => r.alert);
    expect(names).not.toContain('ConversationRiskCertificateExpiringSoon');
    expect(names).not.toContain('ConversationRiskCertificateExpiryImminent');
    expect(names).toContain('ConversationRiskModelNotLoaded');
  });

  it('the chart takes the new rules\' durations and certificate days from values', () => {
    const rules = rulesOf(
      chartRules({
        'metrics.prometheusRule.targetDownFor': '7m',
        'metrics.prometheusRule.metricsAbsentFor': '20m',
        'metrics.prometheusRule.dependencyDownFor': '1m',
        'metrics.prometheusRule.certificateExpiryWarningDays': 30,
        'metrics.prometheusRule.certificateExpiryCriticalDays': 7,
      }),
    );
    const byName = (name: string) => rules.find((r) => r.alert === name)!;
    expect(byName('ConversationRiskTargetDown').for).toBe('7m');
    expect(byName('ConversationRiskMetricsAbsent').for).toBe('20m');
    expect(byName('ConversationRiskDependencyDown').for).toBe('1m');
    expect(byName('ConversationRiskCertificateExpiringSoon').expr).toMatch(/< 30 \* 86400/);
    expect(byName('ConversationRiskCertificateExpiryImminent').expr).toMatch(/< 7 \* 86400/);
  });
});

// --- promtool and a real Prometheus ---------------------------------------------------------------

const hasCommand = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
const promSkip = !hasCommand('promtool') || !hasCommand('prometheus') ? 'promtool and prometheus are not installed (apt-get install prometheus)' : undefined;
if (promSkip !== undefined) console.warn(`[alert-rules] promtool and Prometheus parts skipped: ${promSkip}`);

/** A rule file without annotations: promtool's unit tests then compare labels only. */
function withoutAnnotations(file: RuleFile): RuleFile {
  return { groups: file.groups.map((g) => ({ name: g.name, rules: g.rules.map(({ annotations: _a, ...rule }) => rule as Rule) })) };
}

describe.skipIf(promSkip !== undefined)('alert rules under promtool', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'alert-rules-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const files: Array<[string, () => RuleFile, Record<string, string>]> = [
    ['compose/alerts.yml', () => composeFile, { job: 'conversation-risk' }],
    ["the chart's PrometheusRule", () => chartFile, { namespace: NAMESPACE, service: FULLNAME }],
  ];

  it.each(files)('promtool check rules accepts %s', (_label, file) => {
    const at = path.join(dir, `check-${Math.random().toString(36).slice(2)}.yml`);
    writeFileSync(at, stringify(file()));
    const result = spawnSync('promtool', ['check', 'rules', at], { encoding: 'utf8' });
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it.each(files)('%s fires TargetDown, MetricsAbsent, ModelNotLoaded (per replica), DependencyDown and the certificate alerts when they should, and not otherwise (promtool test rules)', (_label, file, placing) => {
    const rules = path.join(dir, `rules-${Math.random().toString(36).slice(2)}.yml`);
    writeFileSync(rules, stringify(withoutAnnotations(file())));
    const sel = (extra: Record<string, string>) =>
      `{${Object.entries({ ...placing, ...extra }).map(([k, v]) => `${k}="${v}"`).join(',')}}`;
    const pod = { pod: 'risk-0', instance: '10.0.0.1:9464' };
    const day = 86_400;
    const tests = {
      rule_files: [rules],
      evaluation_interval: '1m',
      tests: [
        {
          // Nothing scraped at all (no target found): no `up` series, so only absent() can fire.
          interval: '1m',
          input_series: [],
          alert_rule_test: [
            { eval_time: '11m', alertname: 'ConversationRiskMetricsAbsent', exp_alerts: [{ exp_labels: { ...placing, severity: 'critical' } }] },
            { eval_time: '11m', alertname: 'ConversationRiskTargetDown', exp_alerts: [] },
          ],
        },
        {
          // A target that does not answer: up 0 and none of its metrics.
          interval: '1m',
          input_series: [{ series: `up${sel(pod)}`, values: '0x10' }],
          alert_rule_test: [
            { eval_time: '4m', alertname: 'ConversationRiskTargetDown', exp_alerts: [] },
            { eval_time: '6m', alertname: 'ConversationRiskTargetDown', exp_alerts: [{ exp_labels: { ...placing, ...pod, severity: 'warning' } }] },
            { eval_time: '11m', alertname: 'ConversationRiskMetricsAbsent', exp_alerts: [{ exp_labels: { ...placing, severity: 'critical' } }] },
          ],
        },
        {
          // A healthy target: Redis reachable, a certificate with 60 days left. Nothing fires.
          interval: '1m',
          input_series: [
            { series: `up${sel(pod)}`, values: '1x20' },
            { series: `conversation_risk_model_loaded${sel(pod)}`, values: '1x20' },
            { series: `conversation_risk_dependency_up${sel({ ...pod, dependency: 'redis' })}`, values: '1x20' },
            { series: `conversation_risk_tls_certificate_expiry_timestamp_seconds${sel(pod)}`, values: `${60 * day}x20` },
          ],
          alert_rule_test: ['ConversationRiskTargetDown', 'ConversationRiskMetricsAbsent', 'ConversationRiskDependencyDown', 'ConversationRiskCertificateExpiringSoon', 'ConversationRiskCertificateExpiryImminent'].map(
            (alertname) => ({ eval_time: '20m', alertname, exp_alerts: [] }),
          ),
        },
        {
          // Two replicas, one without its model: the alert names that one, whatever the other says.
          interval: '1m',
          input_series: [
            { series: `conversation_risk_model_loaded${sel(pod)}`, values: '1x20' },
            { series: `conversation_risk_model_loaded${sel({ pod: 'risk-1', instance: '10.0.0.2:9464' })}`, values: '0x20' },
          ],
          alert_rule_test: [
            {
              eval_time: '15m',
              alertname: 'ConversationRiskModelNotLoaded',
              exp_alerts: [{ exp_labels: placing.namespace ? { namespace: NAMESPACE, pod: 'risk-1', severity: 'critical' } : { instance: '10.0.0.2:9464', severity: 'critical' } }],
            },
          ],
        },
        {
          // Redis unreachable; certificates with 10 and 2 days left (on two pods).
          interval: '1m',
          input_series: [
            { series: `conversation_risk_dependency_up${sel({ ...pod, dependency: 'redis' })}`, values: '1 0x10' },
            { series: `conversation_risk_tls_certificate_expiry_timestamp_seconds${sel(pod)}`, values: `${10 * day}x20` },
            { series: `conversation_risk_tls_certificate_expiry_timestamp_seconds${sel({ pod: 'risk-1', instance: '10.0.0.2:9464' })}`, values: `${2 * day}x20` },
          ],
          alert_rule_test: [
            { eval_time: '2m', alertname: 'ConversationRiskDependencyDown', exp_alerts: [] },
            {
              eval_time: '4m',
              alertname: 'ConversationRiskDependencyDown',
              // The chart names the pod; compose's summary over its replicas keeps the dependency only.
              exp_alerts: [{ exp_labels: { ...(placing.namespace ? { namespace: NAMESPACE, pod: pod.pod } : {}), dependency: 'redis', severity: 'critical' } }],
            },
            {
              eval_time: '15m',
              alertname: 'ConversationRiskCertificateExpiringSoon',
              exp_alerts: placing.namespace
                ? [
                    { exp_labels: { namespace: NAMESPACE, pod: 'risk-0', severity: 'warning' } },
                    { exp_labels: { namespace: NAMESPACE, pod: 'risk-1', severity: 'warning' } },
                  ]
                : [{ exp_labels: { severity: 'warning' } }],
            },
            {
              eval_time: '15m',
              alertname: 'ConversationRiskCertificateExpiryImminent',
              exp_alerts: [{ exp_labels: placing.namespace ? { namespace: NAMESPACE, pod: 'risk-1', severity: 'critical' } : { severity: 'critical' } }],
            },
          ],
        },
      ],
    };
    const testFile = path.join(dir, `test-${Math.random().toString(36).slice(2)}.yml`);
    writeFileSync(testFile, stringify(tests));
    const result = spawnSync('promtool', ['test', 'rules', testFile], { encoding: 'utf8' });
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('SUCCESS');
  });
});

interface Target {
  health: string;
  lastError: string;
  labels: Record<string, string>;
}
interface Alert {
  labels: Record<string, string>;
  state: string;
}

/** Debian's prometheus on a loopback port, scraping every second with compose/alerts.yml loaded. */
async function startPrometheus(dir: string, scrapeConfig: Record<string, unknown>) {
  const port = await freePort();
  const config = path.join(dir, `prometheus-${port}.yml`);
  writeFileSync(
    config,
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      scrape_configs: [{ job_name: 'conversation-risk', metrics_path: '/metrics', ...scrapeConfig }],
      rule_files: [path.join(REPO_ROOT, 'compose/alerts.yml')],
    }),
  );
  const child: ChildProcess = spawn(
    'prometheus',
    [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, `data-${port}`)}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (c: Buffer) => (log += c.toString()));
  const api = async <T>(p: string): Promise<T> => {
    const response = await fetch(`http://127.0.0.1:${port}${p}`);
    const body = (await response.json()) as { status: string; data: T };
    if (body.status !== 'success') throw new Error(`${p}: ${JSON.stringify(body)}`);
    return body.data;
  };
  await until(() => fetch(`http://127.0.0.1:${port}/-/ready`).then((r) => (r.ok ? true : undefined), () => undefined), 30_000, 200).catch((e: Error) => {
    throw new Error(`${e.message}: prometheus did not start:\n${log}`);
  });
  return {
    targets: () => api<{ activeTargets: Target[] }>('/api/v1/targets').then((d) => d.activeTargets),
    alerts: () => api<{ alerts: Alert[] }>('/api/v1/alerts').then((d) => d.alerts),
    stop: () => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM')))),
  };
}

describe.skipIf(promSkip !== undefined)('a real Prometheus scraping the real service (loopback)', () => {
  let dir = '';
  let server: ServerProcess | undefined;
  let metricsPort = 0;
  const stops: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'alert-scrape-'));
    server = await startServerProcess({ MODEL_DIR: FIXTURE_MODEL_DIR, METRICS_PORT: String(await freePort()), API_KEYS: 'scrape-test-key-0123456789' });
    metricsPort = Number(/"metrics_port":(\d+)/.exec(server.stdout())?.[1]);
    expect(metricsPort).toBeGreaterThan(0);
  });
  afterAll(async () => {
    for (const stop of stops) await stop();
    server?.child.kill('SIGTERM');
    if (server) await server.exited;
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('scrapes the appliance: at least one healthy target, and neither blind-monitoring alert goes pending', async () => {
    const prometheus = await startPrometheus(dir, { static_configs: [{ targets: [`127.0.0.1:${metricsPort}`] }] });
    stops.push(prometheus.stop);
    const healthy = await until(async () => {
      const up = (await prometheus.targets()).filter((t) => t.health === 'up');
      return up.length >= 1 ? up : undefined;
    }, 30_000, 250);
    expect(healthy[0]?.labels).toMatchObject({ job: 'conversation-risk' });
    // A few evaluations after the first scrape: what is pending now would fire after its `for`.
    await new Promise((r) => setTimeout(r, 3_000));
    const names = (await prometheus.alerts()).map((a) => a.labels.alertname);
    expect(names).not.toContain('ConversationRiskMetricsAbsent');
    expect(names).not.toContain('ConversationRiskTargetDown');
  });

  it('with no target found (Podman without its DNS plugin), ConversationRiskMetricsAbsent goes pending where `up == 0` cannot', async () => {
    const empty = path.join(dir, 'no-targets.json');
    writeFileSync(empty, '[]');
    const prometheus = await startPrometheus(dir, { file_sd_configs: [{ files: [empty] }] });
    stops.push(prometheus.stop);
    const alerts = await until(async () => {
      const a = await prometheus.alerts();
      return a.some((x) => x.labels.alertname === 'ConversationRiskMetricsAbsent') ? a : undefined;
    }, 30_000, 250);
    expect(await prometheus.targets()).toEqual([]);
    expect(alerts.find((a) => a.labels.alertname === 'ConversationRiskMetricsAbsent')).toMatchObject({ state: 'pending', labels: { severity: 'critical' } });
    expect(alerts.map((a) => a.labels.alertname)).not.toContain('ConversationRiskTargetDown');
  });

  it('with a target that does not answer, ConversationRiskTargetDown goes pending', async () => {
    const prometheus = await startPrometheus(dir, { static_configs: [{ targets: [`127.0.0.1:${await freePort()}`] }] });
    stops.push(prometheus.stop);
    const alerts = await until(async () => {
      const a = await prometheus.alerts();
      return a.some((x) => x.labels.alertname === 'ConversationRiskTargetDown') ? a : undefined;
    }, 30_000, 250);
    expect((await prometheus.targets()).map((t) => t.health)).toEqual(['down']);
    expect(alerts.find((a) => a.labels.alertname === 'ConversationRiskTargetDown')).toMatchObject({ state: 'pending', labels: { severity: 'warning' } });
  });
});
