// POST /v2/predict (Preview): one conversation given as messages, scored in real time.
import type { FastifyInstance } from 'fastify';
import { errorResponses, HttpError } from '../../http/errors.ts';
import { noQuerySchema } from '../../http/schemas.ts';
import { checkAges, score, type ScoringDeps } from '../../http/scoring-call.ts';
import { toV2Prediction } from '../../http/answers.ts';
import { messagesToConversation, textCharacters, type Message } from './messages.ts';
import { MAX_CONVERSATION_CHARS, v2PredictBodySchema, v2PredictionSchema, type V2PredictBody } from './schemas.ts';


/** 422 unless the messages' text totals 1 to 500,000 characters, as v1's `conversation`. */
export function checkTextLength(messages: readonly Message[], where = ''): void {
  const chars = textCharacters(messages);
  if (chars < 1 || chars > MAX_CONVERSATION_CHARS) {
    throw new HttpError({ code: 'messages_length', params: { where, max: MAX_CONVERSATION_CHARS, chars } });
  }
}

export async function v2PredictRoute(app: FastifyInstance, deps: ScoringDeps): Promise<void> {
  app.post<{ Body: V2PredictBody }>(
    '/predict',
    { schema: { body: v2PredictBodySchema, querystring: noQuerySchema, response: { 200: v2PredictionSchema, ...errorResponses } } },
    async (request, reply) => {
      const { messages, age_a, age_b, explain } = request.body;
      checkTextLength(messages);
      checkAges(request.body);
      const started = performance.now();
      const conversation = messagesToConversation(messages);
      const [result] = await score(deps, [{ conversation, age_a, age_b, explain }], request, reply, (p) => toV2Prediction(p, conversation));
      if (result === undefined) throw new HttpError({ code: 'prediction_failed' });
      return { ...result, latency_ms: Math.round(performance.now() - started) };
    },
  );
}
