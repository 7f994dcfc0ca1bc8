// POST /v2/predict/batch and GET /v2/predict/batch/:job_id (Preview): asynchronous jobs.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorResponses, HttpError } from '../../http/errors.ts';
import { noQuerySchema } from '../../http/schemas.ts';
import { checkAges } from '../../http/scoring-call.ts';
import type { Jobs, JobView } from '../../jobs/types.ts';
import { messagesToConversation } from './messages.ts';
import { checkTextLength } from './predict.ts';
import { batchBodySchema, batchHeadersSchema, jobAcceptedSchema, jobParamsSchema, jobSchema, type BatchBody } from './schemas.ts';

export interface BatchRouteOptions {
  jobs: Jobs;
  maxItems: number;
}

const POLL_PATH = '/v2/predict/batch/';

function keyOf(request: FastifyRequest): string {
  // Set by the protected context's auth hook; a route here without it would be a wiring bug.
  if (request.apiKeyId === undefined) throw new HttpError({ code: 'internal_error' });
  return request.apiKeyId;
}

const accepted = (job: JobView) => ({ job_id: job.job_id, status: job.status, poll_url: `${POLL_PATH}${job.job_id}` });

export async function v2BatchRoutes(app: FastifyInstance, opts: BatchRouteOptions): Promise<void> {
  const { jobs } = opts;

  app.post<{ Body: BatchBody; Headers: { 'idempotency-key'?: string } }>(
    '/predict/batch',
    {
      schema: {
        body: batchBodySchema(opts.maxItems),
        headers: batchHeadersSchema,
        querystring: noQuerySchema,
        response: { 202: jobAcceptedSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const body = request.body;
      if (body.mode !== 'batch') {
        throw new HttpError({ code: 'mode_not_batch' });
      }
      const seen = new Set<string>();
      const items = body.conversations.map((c, i) => {
        const where = `conversations[${i}].`;
        if (seen.has(c.id)) throw new HttpError({ code: 'duplicate_id', params: { where, id: c.id } });
        seen.add(c.id);
        checkTextLength(c.messages, where);
        checkAges(c, where);
        return { id: c.id, request: { conversation: messagesToConversation(c.messages), age_a: c.age_a, age_b: c.age_b, explain: c.explain } };
      });
      const idemKey = request.headers['idempotency-key'];
      const result = await jobs.submit({
        keyId: keyOf(request),
        items,
        webhookUrl: body.webhook_url,
        idempotency:
          idemKey === undefined
            ? undefined
            : { key: idemKey, fingerprint: createHash('sha256').update(JSON.stringify(body)).digest('hex') },
      });
      if (!result.ok) throw new HttpError(result.error);
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(202).header('location', `${POLL_PATH}${result.job.job_id}`).send(accepted(result.job));
    },
  );

  app.get<{ Params: { job_id: string } }>(
    '/predict/batch/:job_id',
    { schema: { params: jobParamsSchema, response: { 200: jobSchema, ...errorResponses } } },
    async (request) => {
      // Another key's job, an expired one and one lost in a restart all answer the same 404, so a job
      // id reveals nothing about whether it exists.
      const job = await jobs.get(keyOf(request), request.params.job_id);
      if (job === undefined) throw new HttpError({ code: 'job_not_found' });
      return job;
    },
  );
}
