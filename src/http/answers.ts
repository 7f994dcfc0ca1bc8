// The answers' shapes: what a client receives for one scored conversation. v1 keeps the engine's
// prediction and shapes an explanation per turn; v2 (the live route and every job item) keeps scores
// only, with the explanation per message. No conversation_preview in v2: it would put conversation
// text into job memory, polling answers and webhook payloads, and a v2 caller already holds the
// messages it sent.
import { countLines } from '../scoring/conversation.ts';
import { explainLines, explainTurns, type Explanation, type TurnExplanation } from '../scoring/explain.ts';
import type { Prediction } from '../scoring/types.ts';

export type V1Prediction = Omit<Prediction, 'explanation'> & { explanation?: TurnExplanation };

/** The v1 answer: the engine's prediction, its running trace (when asked) shaped per turn with lines. */
export function toV1Prediction(p: Prediction): V1Prediction {
  const { explanation: trace, ...rest } = p;
  if (trace === undefined) return rest;
  return { ...rest, explanation: explainTurns(trace) };
}

/** The engine's prediction without the preview, with the score under its Preview name. */
export type V2Prediction = Omit<Prediction, 'conversation_preview' | 'harmful_score' | 'explanation'> & {
  harmfulness_score: number;
  explanation?: Explanation;
};

/**
 * `conversation` is the text v2 messages became (one message per line), needed only to index an
 * explanation by message; the result keeps none of it.
 */
export function toV2Prediction(p: Prediction, conversation: string): V2Prediction {
  const out: V2Prediction = {
    harmfulness_score: p.harmful_score,
    is_harmful: p.is_harmful,
    risk_level: p.risk_level,
    predatory_user: p.predatory_user,
    user_probabilities: { user1: p.user_probabilities.user1, user2: p.user_probabilities.user2, neither: p.user_probabilities.neither },
    confidence: p.confidence,
    num_segments: p.num_segments,
    used_age_features: p.used_age_features,
  };
  if (p.explanation !== undefined) out.explanation = explainLines(p.explanation, countLines(conversation));
  return out;
}
