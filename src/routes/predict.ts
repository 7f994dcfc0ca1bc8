// POST /predict and POST /batch_predict: the v1 scoring routes (protected context).
import type { FastifyInstance } from 'fastify';
import { errorBodySchema } from '../http/errors.ts';
import { checkAges, score, type ScoringDeps } from '../http/scoring-call.ts';
import {
  batchBodySchema,
  batchResponseSchema,
  predictBodySchema,
  predictionSchema,
  type BatchBody,
  type PredictBody,
} from '../http/schemas.ts';
import type { ScoreRequest } from '../scoring/types.ts';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

export async function predictRoutes(app: FastifyInstance, deps: ScoringDeps): Promise<void> {
  app.post<{ Body: PredictBody }>(
    '/predict',
    { schema: { body: predictBodySchema, response: { 200: predictionSchema, ...errors } } },
    async (request, reply) => {
      const { conversation, age_a, age_b } = request.body;
      checkAges(request.body);
      const [prediction] = await score(deps, [{ conversation, age_a, age_b }], request, reply);
      return prediction;
    },
  );

  app.post<{ Body: BatchBody }>(
    '/batch_predict',
    { schema: { body: batchBodySchema, response: { 200: batchResponseSchema, ...errors } } },
    async (request, reply) => {
      // One invalid item makes the whole batch a 422 naming its index: partial answers would shift
      // positions and a caller matching by order would attach scores to the wrong conversations.
      const items: ScoreRequest[] = request.body.conversations.map((item, i) => {
        if (typeof item === 'string') return { conversation: item };
        checkAges(item, `conversations[${i}].`);
        return { conversation: item.conversation, age_a: item.age_a, age_b: item.age_b };
      });
      return { predictions: await score(deps, items, request, reply) };
    },
  );
}
