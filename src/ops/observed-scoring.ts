// The one path every scored conversation takes out of the engine, whoever asked for it (a v1 route, the
// v2 route, a batch job): the prediction metric, the audit line and, for an explained answer, the
// first-alert metric are recorded here and nowhere else. Callers shape the answer (http/answers.ts);
// the explanation metric counts the answer as shaped, since v1 indexes turns and v2 messages.
import type { ModelManifest, Prediction, ScoreOptions, ScoreRequest, Scorer } from '../scoring/types.ts';
import type { AuditJobRef, AuditSink } from './audit.ts';
import type { Metrics } from './metrics.ts';

/** What the explanation metric reads of a shaped answer. */
export interface ObservedAnswer {
  explanation?: { first_alert_index: number | null } | undefined;
}

export interface ObservedCall<A extends ObservedAnswer> {
  /** The caller's answer for one prediction (v1, v2); `request` is the item it was scored from. */
  shape: (prediction: Prediction, request: ScoreRequest) => A;
  /** Milliseconds the audit line records (a route's whole request); by default, since the call began. */
  latencyMs?: () => number;
  /** The job item request `index` is, for its audit line. */
  job?: (index: number) => AuditJobRef;
}

/** What the observed path needs of the engine. */
export type ObservedEngine = Pick<Scorer, 'ready' | 'manifest' | 'score'>;

export const modelVersion = (m: ModelManifest) => `${m.name}@${m.version}`;

export class ObservedScorer {
  readonly #scorer: ObservedEngine;
  readonly #metrics: Metrics | undefined;
  readonly #audit: AuditSink;

  constructor(scorer: ObservedEngine, metrics: Metrics | undefined, audit: AuditSink) {
    this.#scorer = scorer;
    this.#metrics = metrics;
    this.#audit = audit;
  }

  /** Whether the engine has its model loaded. */
  get ready(): boolean {
    return this.#scorer.ready;
  }

  /** The loaded model's manifest (the version the answers and audit lines name). */
  get manifest(): ModelManifest | undefined {
    return this.#scorer.manifest;
  }

  /** Scores `requests` and records each one; rejects with the engine's ScoringError, recording nothing. */
  async score<A extends ObservedAnswer>(requests: ScoreRequest[], call: ObservedCall<A>, options?: ScoreOptions): Promise<A[]> {
    const started = performance.now();
    const predictions = await this.#scorer.score(requests, options);
    const latencyMs = call.latencyMs?.() ?? Math.round(performance.now() - started);
    const manifest = this.#scorer.manifest;
    const version = manifest === undefined ? 'unknown' : modelVersion(manifest);
    return predictions.map((prediction, i) => {
      const request = requests[i] as ScoreRequest;
      this.#metrics?.recordPrediction(prediction);
      this.#audit(request.conversation, prediction, version, latencyMs, call.job?.(i));
      const answer = call.shape(prediction, request);
      if (answer.explanation !== undefined) this.#metrics?.recordExplanation(answer.explanation.first_alert_index);
      return answer;
    });
  }
}
