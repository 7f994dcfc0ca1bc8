// POST /predict and POST /batch_predict: the v1 scoring routes (protected context).
import type { FastifyInstance } from 'fastify';
import { errorResponses } from '../http/errors.ts';
import { checkAges, score } from '../http/scoring-call.ts';
import type { ProtectedRouteDeps } from './deps.ts';
import {
  batchBodySchema,
  batchResponseSchema,
  explainQuerySchema,
  MAX_PREDICT_BODY_BYTES,
  predictBodySchema,
  predictionSchema,
  type BatchBody,
  type ExplainQuery,
  type PredictBody,
} from '../http/schemas.ts';
import { toV1Prediction } from '../http/answers.ts';
import type { ScoreRequest } from '../scoring/types.ts';

export async function predictRoutes(app: FastifyInstance, deps: ProtectedRouteDeps): Promise<void> {
  app.post<{ Body: PredictBody; Querystring: ExplainQuery }>(
    '/predict',
    {
      bodyLimit: Math.min(deps.config.BODY_LIMIT_BYTES, MAX_PREDICT_BODY_BYTES),
      schema: { body: predictBodySchema, querystring: explainQuerySchema, response: { 200: predictionSchema, ...errorResponses } },
    },
    async (request, reply) => {
      const { conversation, age_a, age_b } = request.body;
      checkAges(request.body);
      const explain = request.query.explain === 'true';
      const [prediction] = await score(deps, [{ conversation, age_a, age_b, explain }], request, reply, toV1Prediction);
      return prediction;
    },
  );

  app.post<{ Body: BatchBody; Querystring: ExplainQuery }>(
    '/batch_predict',
    { schema: { body: batchBodySchema, querystring: explainQuerySchema, response: { 200: batchResponseSchema, ...errorResponses } } },
    async (request, reply) => {
      const explain = request.query.explain === 'true';
      // One invalid item makes the whole batch a 422 naming its index: partial answers would shift
      // positions and a caller matching by order would attach scores to the wrong conversations.
      const items: ScoreRequest[] = request.body.conversations.map((item, i) => {
        if (typeof item === 'string') return { conversation: item, explain };
        checkAges(item, `conversations[${i}].`);
        return { conversation: item.conversation, age_a: item.age_a, age_b: item.age_b, explain };
      });
      return { predictions: await score(deps, items, request, reply, toV1Prediction) };
    },
  );
}
