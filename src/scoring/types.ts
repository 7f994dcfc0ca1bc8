// The scoring engine's public types: what the HTTP layer hands in and gets back.
// Nothing in this file (or in src/scoring/) knows about HTTP; nothing in src/http knows about ONNX.

/** Who a turn belongs to. user1 is the first distinct speaker, user2 the second. */
export type Speaker = 'user1' | 'user2';

export type Attribution = Speaker | 'neither';

export type RiskLevel = 'Safe' | 'Low Risk' | 'Medium Risk' | 'High Risk' | 'Critical';

/** One conversation to score, as the API received it (ages still raw strings, already validated). */
export interface ScoreRequest {
  conversation: string;
  /** Age of speaker A, which is user1. */
  age_a?: string | undefined;
  /** Age of speaker B, which is user2. */
  age_b?: string | undefined;
  /** Also return the running score after every turn (Prediction.explanation); costs one pass. */
  explain?: boolean | undefined;
}

/**
 * Who wrote a turn as the parser sees it: 'unknown' when the text has no speaker prefix anywhere
 * (a flat export or a paste), so the service cannot tell the sides apart.
 */
export type TurnSpeaker = Speaker | 'unknown';

/** Speaker turns are the unit the model reads. */
export interface Turn {
  speaker: TurnSpeaker;
  text: string;
}

/** A turn as parsed from a conversation: also the 0-based line where it starts. */
export interface ParsedTurn extends Turn {
  line: number;
}

export interface UserProbabilities {
  user1: number;
  user2: number;
  neither: number;
}

/** The running score after every parsed turn of an explained conversation (one pass, no re-scoring). */
export interface TurnTrace {
  /** The score of a conversation with no token yet: the base the first turn's rise is measured from. */
  start: number;
  /** Each parsed turn: the 0-based line where it starts, who wrote it, the score had the chat ended there. */
  turns: Array<{ line: number; speaker: TurnSpeaker; score: number }>;
}

/** What the engine says about one conversation; the HTTP layer shapes it into v1 or v2 responses. */
export interface Prediction {
  conversation_preview: string;
  harmful_score: number;
  is_harmful: boolean;
  risk_level: RiskLevel;
  predatory_user: Attribution;
  user_probabilities: UserProbabilities;
  confidence: number;
  num_segments: number;
  used_age_features: boolean;
  /** Only when the request asked to explain: the running score after every parsed turn. */
  explanation?: TurnTrace;
}

/** The parts of manifest.json the service reads. See docs/model-contract.md. */
export interface ModelManifest {
  /** Version of docs/model-contract.md this model satisfies (3 is still served, see segment). */
  contract_version: 3 | 4;
  name: string;
  version: string;
  created?: string;
  files: Record<string, { sha256: string; bytes?: number }>;
  inputs: Record<string, { dtype: string; shape: Array<string | number> }>;
  outputs: Record<string, { dtype: string; shape: Array<string | number> }>;
  labels: { harmful: string[]; speaker: Attribution[] };
  segment: {
    max_turns: number;
    max_tokens_per_turn: number;
    /** Contract 4: piece length for turns of the unknown speaker (flat text); contract 3 uses max_tokens_per_turn. */
    max_tokens_per_flat_piece?: number;
  };
  age_features: { size: number; description?: string };
  calibration: { method: 'temperature'; temperature: number; bias: number };
  aggregation?: { method: string };
  training_data?: Record<string, unknown>;
  metrics?: Record<string, unknown>;
}

/**
 * Why the engine could not score: the HTTP layer maps each kind to a status code. `interrupted`: the
 * worker running the call exited (it is replaced); the same call may succeed when tried again.
 */
export type ScoringErrorKind = 'model_unavailable' | 'overloaded' | 'timeout' | 'interrupted' | 'internal';

/** How a worker's task fails when the worker could not load the model: the pool reads the prefix. */
export const WORKER_LOAD_FAILED = 'scoring worker has no model: ';

export class ScoringError extends Error {
  readonly kind: ScoringErrorKind;
  constructor(kind: ScoringErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ScoringError';
    this.kind = kind;
  }
}

export interface ScoreOptions {
  /** Aborts waiting (queued) work when the request is cancelled or its deadline passes. */
  signal?: AbortSignal;
  /** Overrides the scorer's default deadline for this call (milliseconds). */
  timeoutMs?: number;
}

/** Per-request facts the engine reports so the ops layer can observe without seeing text. */
export interface ScoreObservation {
  inferenceSeconds: number;
  segments: number[];
}

export interface Scorer {
  /** True once the model package is verified and loaded in every worker. */
  readonly ready: boolean;
  /** The loaded model's manifest; undefined while the model is not loaded. */
  readonly manifest: ModelManifest | undefined;
  /** Work items waiting for a worker. */
  readonly queueSize: number;
  /** Work items being run by a worker. */
  readonly inFlight: number;
  /** Scores conversations, returning predictions in input order. Rejects with ScoringError. */
  score(requests: ScoreRequest[], options?: ScoreOptions): Promise<Prediction[]>;
  close(): Promise<void>;
}
