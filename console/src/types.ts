// What the console sends to and reads from the appliance's API (README "API", docs/api-v2.md). The
// server's own engine types are reused where they are plain types; the wire shapes are written out
// here because the console reads JSON, and api.ts checks each answer against them before use.
import type { Attribution, Prediction, RiskLevel, Speaker, TurnSpeaker, UserProbabilities } from '../../src/scoring/types.ts';

export type { Attribution, RiskLevel, Speaker, TurnSpeaker, UserProbabilities };

/** One /v2 message: `user1` or `user2`, and its text (a timestamp is accepted by the API, not used). */
export interface Message {
  user: Speaker;
  text: string;
  timestamp?: string;
}

export interface Evidence {
  index: number;
  user: TurnSpeaker;
  /** How much the running score rose after this entry. */
  weight: number;
  /** v1 only: the 0-based line where the turn starts. */
  line?: number;
}

/** `explanation` of an explained answer: per turn (v1) or per message (v2). */
export interface Explanation {
  turn_scores: number[];
  first_alert_index: number | null;
  evidence: Evidence[];
  /** v1 only: the 0-based line where each turn starts. */
  turn_lines?: number[];
}

/** The fields v1 and v2 answers share, the score named as v2 names it (v1: `harmful_score`). */
export type Scores = Omit<Prediction, 'conversation_preview' | 'harmful_score' | 'explanation'> & {
  harmfulness_score: number;
  explanation?: Explanation;
};

/** The ages as the API takes them: user1's is age_a, user2's age_b. */
export interface Ages {
  age_a?: string;
  age_b?: string;
}

/** One item of a /v2 batch job. */
export interface BatchItem extends Ages {
  id: string;
  messages: Message[];
  explain: true;
}

export type JobStatus = 'queued' | 'running' | 'done' | 'failed';

export interface JobAccepted {
  job_id: string;
  status: JobStatus;
  poll_url: string;
}

export interface JobView {
  job_id: string;
  status: JobStatus;
  progress: { done: number; total: number };
  results?: Record<string, Scores>;
  error?: string;
}
