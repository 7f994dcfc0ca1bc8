// Prometheus metrics, one registry per app so tests can run several. Served only by the separate
// metrics listener (startMetricsServer), never by the public port. Every name starts with PREFIX.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ModelManifest, Prediction, ScoreObservation } from '../scoring/types.ts';

export const PREFIX = 'conversation_risk_';

/** What the gauges read at scrape time; the Scorer interface satisfies it. */
export interface ScorerState {
  readonly ready: boolean;
  readonly manifest: ModelManifest | undefined;
  readonly queueSize: number;
  readonly inFlight: number;
}

export interface Metrics {
  /** The registry: later modules (v2 jobs) add their own metrics to it with PREFIX. */
  registry: Registry;
  httpRequests: Counter<'route' | 'method' | 'status'>;
  httpDuration: Histogram<'route' | 'method'>;
  inferenceDuration: Histogram;
  segmentsPerConversation: Histogram;
  predictions: Counter<'risk_level'>;
  rateLimited: Counter;
  /** Points the queue, in-flight and model gauges at the scorer they describe. */
  observeScorer(scorer: ScorerState): void;
  /** Records one scored conversation's risk level. */
  recordPrediction(prediction: Prediction): void;
  /** The engine's per-call report (createScorer's onObservation): inference time and segments. */
  recordObservation(observation: ScoreObservation): void;
  /** One explained conversation and the index of its first alert (null: no message crossed 0.5). */
  recordExplanation(firstAlertIndex: number | null): void;
  /** Exports the request-body bytes in flight (http/body-budget.ts), read at scrape time. */
  observeInflightBodies(bytes: () => number): void;
  /** Exports the served certificate's expiry, read from `notAfter` at scrape time. */
  observeCertificate(notAfter: () => Date): void;
  /** Exports `dependency_up{dependency=name}`, read from `up` at scrape time. */
  observeDependency(name: string, up: () => boolean): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
  let scorer: ScorerState | undefined;
  const dependencies = new Map<string, () => boolean>();
  let certificateNotAfter: (() => Date) | undefined;
  let inflightBodies: (() => number) | undefined;
  const registers = [registry];

  const httpRequests = new Counter({
    name: `${PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by route pattern, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time from request received to response sent, by route pattern.',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const inferenceDuration = new Histogram({
    name: `${PREFIX}inference_duration_seconds`,
    help: 'Worker time (tokenization and ONNX run) of one scoring call, summed over its tasks.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const segmentsPerConversation = new Histogram({
    name: `${PREFIX}segments_per_conversation`,
    help: 'Number of model-sized segments each scored conversation was split into.',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers,
  });
  const predictions = new Counter({
    name: `${PREFIX}predictions_total`,
    help: 'Conversations scored, by risk level.',
    labelNames: ['risk_level'] as const,
    registers,
  });
  const rateLimited = new Counter({
    name: `${PREFIX}rate_limited_requests_total`,
    help: 'Requests refused with 429 because their API key exceeded the rate limit.',
    registers,
  });
  const explained = new Counter({
    name: `${PREFIX}explained_conversations_total`,
    help: 'Conversations scored with explain: running scores, first alert and evidence.',
    registers,
  });
  const firstAlert = new Histogram({
    name: `${PREFIX}first_alert_message_index`,
    help: 'Index of the message (v1: turn) whose running score first rose above 0.5, per explained conversation that alerted.',
    buckets: [0, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
    registers,
  });
  new Gauge({
    name: `${PREFIX}queue_depth`,
    help: 'Scoring work items waiting for a worker (the pool queue and large calls waiting for their slots).',
    registers,
    collect() {
      this.set(scorer?.queueSize ?? 0);
    },
  });
  new Gauge({
    name: `${PREFIX}inference_in_flight`,
    help: 'Scoring work items being run by a worker.',
    registers,
    collect() {
      this.set(scorer?.inFlight ?? 0);
    },
  });
  new Gauge({
    name: `${PREFIX}model_loaded`,
    help: '1 when the model is verified and loaded, else 0 (the service is degraded).',
    registers,
    collect() {
      this.set(scorer?.ready === true ? 1 : 0);
    },
  });
  new Gauge({
    name: `${PREFIX}dependency_up`,
    help: '1 while a configured shared dependency (Redis) is reachable and answering, else 0 (not ready).',
    labelNames: ['dependency'] as const,
    registers,
    collect() {
      for (const [name, up] of dependencies) this.set({ dependency: name }, up() ? 1 : 0);
    },
  });
  new Gauge({
    name: `${PREFIX}inflight_body_bytes`,
    help: 'Request-body bytes admitted and not yet answered, against MAX_INFLIGHT_BODY_BYTES (beyond it: 503).',
    registers,
    collect() {
      this.set(inflightBodies?.() ?? 0);
    },
  });
  // Registered once a certificate is observed: an unlabelled gauge reads 0 until set, and an expiry of
  // 0 is an expired certificate to every alert on it (TLS_MODE=off would page for a certificate it has not).
  const certificateExpiry = new Gauge({
    name: `${PREFIX}tls_certificate_expiry_timestamp_seconds`,
    help: "Unix time at which the API listener's TLS certificate expires (after a reload, the new one's); absent with TLS_MODE=off.",
    registers: [],
    collect() {
      if (certificateNotAfter !== undefined) this.set(Math.floor(certificateNotAfter().getTime() / 1000));
    },
  });
  new Gauge({
    name: `${PREFIX}model_info`,
    help: 'Always 1, labelled with the loaded model name and version.',
    labelNames: ['name', 'version'] as const,
    registers,
    collect() {
      this.reset();
      const m = scorer?.manifest;
      if (m !== undefined) this.set({ name: m.name, version: m.version }, 1);
    },
  });

  return {
    registry,
    httpRequests,
    httpDuration,
    inferenceDuration,
    segmentsPerConversation,
    predictions,
    rateLimited,
    observeScorer(s) {
      scorer = s;
    },
    recordPrediction(p) {
      predictions.inc({ risk_level: p.risk_level });
    },
    recordObservation(o) {
      inferenceDuration.observe(o.inferenceSeconds);
      for (const n of o.segments) segmentsPerConversation.observe(n);
    },
    observeInflightBodies(bytes) {
      inflightBodies = bytes;
    },
    observeCertificate(notAfter) {
      if (certificateNotAfter === undefined) registry.registerMetric(certificateExpiry);
      certificateNotAfter = notAfter;
    },
    observeDependency(name, up) {
      dependencies.set(name, up);
    },
    recordExplanation(index) {
      explained.inc();
      if (index !== null) firstAlert.observe(index);
    },
  };
}
