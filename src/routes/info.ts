// GET /info (protected): the loaded model's manifest, so an operator can check what is serving.
import type { FastifyInstance } from 'fastify';
import { errorResponses, HttpError } from '../http/errors.ts';
import { infoSchema } from '../http/schemas.ts';
import type { Scorer } from '../scoring/types.ts';

export async function infoRoute(app: FastifyInstance, opts: { scorer: Scorer }): Promise<void> {
  app.get(
    '/info',
    { schema: { response: { 200: infoSchema, ...errorResponses } } },
    async () => {
      const manifest = opts.scorer.manifest;
      if (manifest === undefined) throw new HttpError({ code: 'model_unavailable' });
      return manifest;
    },
  );
}
