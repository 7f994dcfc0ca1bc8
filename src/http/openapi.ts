// GET /openapi.json: the API's OpenAPI 3.1 document, public, for clients, code generators and fuzzers.
// @fastify/swagger (dynamic mode) builds it from the routes' own JSON Schemas (body, query, headers,
// path parameters, success responses), so it cannot drift from what the routes validate and
// serialize. This file adds only what those schemas do not say: which routes need the bearer key,
// every error answer (`{detail, code}`) with its status and headers, the headers of success answers
// (model version, rate limit, Location), names, summaries and examples.
// test/api-contract/openapi.test.ts checks it against the app's routes, their behaviour and the spec.
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { errorText, type CodedError } from '../error-catalogue.ts';
import { errorBodySchema } from './errors.ts';

export const OPENAPI_PATH = '/openapi.json';

type Json = Record<string, unknown>;

const ERROR_REF = { $ref: '#/components/schemas/ErrorBody' } as const;
const { $id: _id, ...errorBody } = errorBodySchema;
const errorBodyComponent = { ...errorBody, required: [...errorBody.required] };

const header = (description: string, schema: Json, required = false) => ({ description, required, schema });

/** On every answer to an authenticated request (absent on 401/403, and while Redis is down: rate limit not enforced). */
const RATE_LIMIT_HEADERS = {
  'x-ratelimit-limit': header('Requests allowed per window for this API key (`RATE_LIMIT_MAX`).', { type: 'integer', minimum: 0 }),
  'x-ratelimit-remaining': header('Requests left to this API key in the current window.', { type: 'integer', minimum: 0 }),
  'x-ratelimit-reset': header('Seconds until the current window ends.', { type: 'integer', minimum: 0 }),
  'RateLimit-Policy': header('The same quota in the IETF httpapi draft\'s form: `"per-key";q=<limit>;w=<window seconds>`.', {
    type: 'string',
    pattern: '^"per-key";q=\\d+;w=\\d+$',
  }),
  RateLimit: header('The same figures in the IETF httpapi draft\'s form: `"per-key";r=<remaining>;t=<seconds to reset>`.', {
    type: 'string',
    pattern: '^"per-key";r=\\d+;t=\\d+$',
  }),
};

const RETRY_AFTER = header('Seconds to wait before retrying.', { type: 'integer', minimum: 0 }, true);

const MODEL_HEADERS = {
  'X-Model-Version': header('`<name>@<version>` of the model that scored the answer.', { type: 'string', pattern: '^[^@]+@.+$' }, true),
  'X-Model-Name': header('Name of the model that scored the answer.', { type: 'string' }, true),
};

/** A schema error's example (`invalid_field`): its text as http/validation-detail.ts writes it. */
const invalid = (text: string): CodedError => ({ code: 'invalid_field', params: { text } });

interface ErrorDoc {
  description: string;
  /** Example errors of the catalogue, rendered as the service writes them. */
  details: CodedError[];
  headers?: Json;
}

/** What each status means wherever it appears; a route may add examples of its own. */
const ERRORS: Record<number, ErrorDoc> = {
  401: {
    description: 'No `Authorization: Bearer <key>` header, or a malformed one. Checked before the body is read.',
    details: [{ code: 'missing_api_key' }],
    headers: { 'WWW-Authenticate': header('Always `Bearer`.', { type: 'string', enum: ['Bearer'] }, true) },
  },
  403: { description: 'The key is not one of the configured API keys.', details: [{ code: 'invalid_api_key' }] },
  404: { description: 'No such resource.', details: [{ code: 'not_found' }] },
  413: {
    description:
      "The body is over the route's limit (`/predict`: 6,065,536 bytes; other routes: `BODY_LIMIT_BYTES`), or larger than all of `MAX_INFLIGHT_BODY_BYTES`.",
    details: [{ code: 'body_too_large', params: { limit: 6065536 } }, { code: 'body_over_inflight_limit', params: { limit: 67108864 } }],
  },
  414: { description: 'A path parameter (a job id) over 100 characters.', details: [{ code: 'uri_too_long' }] },
  415: {
    description: 'A body that is neither JSON nor text, or a compressed one (`Content-Encoding` other than `identity`).',
    details: [{ code: 'unsupported_media_type' }, { code: 'content_encoding_unsupported' }],
  },
  422: {
    description: 'The body or the query is invalid; the detail names the field (never quoting its value).',
    details: [{ code: 'malformed_json' }, invalid('body: unknown field "age_A"')],
  },
  429: {
    description: "Over the API key's rate limit (`RATE_LIMIT_MAX` per `RATE_LIMIT_WINDOW_MS`, shared by v1 and v2).",
    details: [{ code: 'rate_limited', params: { max: 60, after: '42 seconds' } }],
    headers: { 'Retry-After': RETRY_AFTER, ...RATE_LIMIT_HEADERS },
  },
  500: { description: 'A bug; logged with its stack frames, never with the request.', details: [{ code: 'prediction_failed' }] },
  503: {
    description:
      'The model is not loaded (degraded), request bodies in flight are over `MAX_INFLIGHT_BODY_BYTES`, the scoring queue is full, scoring missed its deadline, a scoring worker stopped mid-call, or the service is shutting down: retry after `Retry-After`.',
    details: [
      { code: 'model_unavailable' },
      { code: 'body_budget_full' },
      { code: 'scoring_queue_full' },
      { code: 'scoring_timeout' },
      { code: 'scoring_interrupted' },
      { code: 'service_closing' },
    ],
    headers: { 'Retry-After': RETRY_AFTER },
  },
};

const CATCH_ALL: Record<'4XX' | '5XX', ErrorDoc> = {
  '4XX': {
    description:
      'Any other refused request: framing the service does not accept (400), an unknown route (404), headers or body too slow (408), headers too large (431).',
    details: [{ code: 'bad_request' }, { code: 'not_found' }, { code: 'request_timeout' }, { code: 'headers_too_large' }],
  },
  '5XX': { description: 'Any other server-side failure.', details: [{ code: 'internal_error' }] },
};

// ---- Examples: real answers of the shipped model (rounded), checked against the schemas by the tests.

const CHAT = 'user1: hey, how was school?\nuser2: fine, we had a test';
const PREDICTION = {
  conversation_preview: CHAT,
  harmful_score: 0.101,
  is_harmful: false,
  risk_level: 'Safe',
  predatory_user: 'neither',
  user_probabilities: { user1: 0.101, user2: 0.000146, neither: 0.899 },
  confidence: 0.747,
  num_segments: 1,
  used_age_features: true,
};
const FLAGGED_CHAT = 'user1: asl\nuser2: 14 f u\nuser1: 32 m. u home alone?\nuser2: ya\nuser1: cool u got a cam?';
const EXPLAINED = {
  conversation_preview: FLAGGED_CHAT,
  harmful_score: 0.987,
  is_harmful: true,
  risk_level: 'Critical',
  predatory_user: 'user1',
  user_probabilities: { user1: 0.987, user2: 0.000000001, neither: 0.0125 },
  confidence: 0.957,
  num_segments: 1,
  used_age_features: false,
  explanation: {
    turn_scores: [0.0277, 0.0155, 0.647, 0.804, 0.987],
    turn_lines: [0, 1, 2, 3, 4],
    first_alert_index: 2,
    evidence: [
      { index: 2, user: 'user1', weight: 0.632, line: 2 },
      { index: 4, user: 'user1', weight: 0.183, line: 4 },
      { index: 3, user: 'user2', weight: 0.157, line: 3 },
      { index: 0, user: 'user1', weight: 0.0089, line: 0 },
    ],
  },
};
const { conversation_preview: _preview, harmful_score, ...scores } = PREDICTION;
const V2_RESULT = { harmfulness_score: harmful_score, ...scores };
const MESSAGES = [
  { user: 'user1', text: 'hey, how was school?', timestamp: '2025-05-01T16:02:11Z' },
  { user: 'user2', text: 'fine, we had a test', timestamp: '2025-05-01T16:02:40Z' },
];
const JOB_ID = 'job_3f9c2a71d4e84b0c9a6e1f2b5c7d8e90';

const example = (summary: string, value: unknown) => ({ summary, value });

interface SuccessDoc {
  description: string;
  headers?: Json;
  examples?: Record<string, { summary: string; value: unknown }>;
  links?: Json;
}

interface OperationDoc {
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Public routes need no key and are never rate limited. */
  auth: 'public' | 'bearer';
  /** The success and other documented answers the route's schema declares, by status. */
  answers: Record<string, SuccessDoc>;
  /** Error statuses with a meaning on this route, beyond the 4XX/5XX catch-alls. */
  errors: number[];
  /** More example errors for an error status on this route. */
  errorDetails?: Record<number, CodedError[]>;
  requestExamples?: Record<string, { summary: string; value: unknown }>;
}

const SCORED = { ...MODEL_HEADERS, ...RATE_LIMIT_HEADERS };

/** Every route the app serves, by `METHOD url` as Fastify registers it. */
export const OPERATIONS: Record<string, OperationDoc> = {
  'GET /health': {
    operationId: 'getHealth',
    summary: 'Uptime: always 200; `degraded` while the model is not loaded.',
    tag: 'Probes',
    auth: 'public',
    answers: { 200: { description: "The model's state.", examples: { healthy: example('Model loaded', { status: 'healthy' }) } } },
    errors: [],
  },
  'GET /livez': {
    operationId: 'getLiveness',
    summary: 'Kubernetes liveness: 200 while the process serves HTTP.',
    tag: 'Probes',
    auth: 'public',
    answers: { 200: { description: 'Alive.', examples: { alive: example('Serving', { status: 'alive' }) } } },
    errors: [],
  },
  'GET /readyz': {
    operationId: 'getReadiness',
    summary: 'Kubernetes readiness: 200 when the model is loaded and, with `REDIS_URL`, Redis answers.',
    tag: 'Probes',
    auth: 'public',
    answers: {
      200: { description: 'Ready.', examples: { ready: example('Ready', { status: 'healthy' }) } },
      503: {
        description: 'Not ready; `reasons` says why. (The one error answer that is not `{detail, code}`: probes read it.)',
        examples: { degraded: example('Model not loaded', { status: 'degraded', reasons: ['model_not_loaded'] }) },
      },
    },
    errors: [],
  },
  [`GET ${OPENAPI_PATH}`]: {
    operationId: 'getOpenApi',
    summary: 'This document (OpenAPI 3.1).',
    tag: 'Meta',
    auth: 'public',
    answers: { 200: { description: 'The OpenAPI document of this service.' } },
    errors: [],
  },
  'POST /predict': {
    operationId: 'predict',
    summary: 'Score one conversation.',
    description: 'Answers one Prediction; `?explain=true` adds `explanation` (running score per turn, first alert, evidence).',
    tag: 'Scoring',
    auth: 'bearer',
    answers: {
      200: {
        description: 'One Prediction.',
        headers: SCORED,
        examples: { scored: example('A harmless chat with ages', PREDICTION), explained: example('With ?explain=true', EXPLAINED) },
      },
    },
    errors: [401, 403, 413, 415, 422, 429, 500, 503],
    errorDetails: {
      422: [
        invalid('conversation: is required'),
        invalid('conversation: must be at most 500000 characters'),
        { code: 'invalid_age', params: { field: 'age_b', maxAge: 120 } },
        invalid('query: unknown parameter "explian"'),
      ],
    },
    requestExamples: {
      withAges: example('Speakers prefixed, both ages', { conversation: CHAT, age_a: '34', age_b: 'minor' }),
      textOnly: example('No ages: a text-only prediction', { conversation: FLAGGED_CHAT }),
    },
  },
  'POST /batch_predict': {
    operationId: 'batchPredict',
    summary: 'Score 1 to 100 conversations; the answer keeps their order.',
    description: 'One invalid item makes the whole batch a 422 naming its index. Counts once against the rate limit.',
    tag: 'Scoring',
    auth: 'bearer',
    answers: {
      200: {
        description: 'One Prediction per input item, in input order.',
        headers: SCORED,
        examples: { scored: example('Two conversations', { predictions: [PREDICTION, EXPLAINED] }) },
      },
    },
    errors: [401, 403, 413, 415, 422, 429, 500, 503],
    errorDetails: { 422: [invalid('conversations: must hold at most 100 items'), invalid('conversations[2]: must not be empty')] },
    requestExamples: {
      mixed: example('A plain string and an item with an age', {
        conversations: ['user1: hi\nuser2: hello', { conversation: 'alice: hi\nbob: hey', age_b: '13-15' }],
      }),
    },
  },
  'GET /info': {
    operationId: 'getInfo',
    summary: "The loaded model's manifest.",
    tag: 'Model',
    auth: 'bearer',
    answers: {
      200: {
        description: 'manifest.json of the loaded model package: name, version, files with SHA-256 and size, tensors, labels, calibration, metrics.',
        headers: RATE_LIMIT_HEADERS,
        examples: {
          manifest: example('Abridged', {
            name: 'conversation-risk',
            version: '3.17.0',
            contract_version: 3,
            files: { 'model.onnx': { sha256: 'a73930dd7563a9c21129aef4607d8a7ca88d24581a691cee8ec92faa149c771a', bytes: 15869140 } },
          }),
        },
      },
    },
    errors: [401, 403, 429, 503],
  },
  'POST /v2/predict': {
    operationId: 'v2Predict',
    summary: 'Preview: score one conversation given as messages, in real time.',
    description: 'No `conversation_preview`. `"explain": true` adds `explanation`, indexed by message.',
    tag: 'Preview /v2',
    auth: 'bearer',
    answers: {
      200: {
        description: 'The Preview prediction, with `latency_ms`.',
        headers: SCORED,
        examples: { scored: example('A harmless chat with ages', { ...V2_RESULT, latency_ms: 12 }) },
      },
    },
    errors: [401, 403, 413, 415, 422, 429, 500, 503],
    errorDetails: { 422: [{ code: 'messages_length', params: { max: 500000, chars: 0 } }, invalid('query: unknown parameter "explain"')] },
    requestExamples: { messages: example('Two messages, both ages', { messages: MESSAGES, age_a: '34', age_b: 'minor' }) },
  },
  'POST /v2/predict/batch': {
    operationId: 'v2SubmitBatch',
    summary: 'Preview: queue a batch job; poll it, or have a webhook called when it ends.',
    description: 'A replayed `Idempotency-Key` answers the original job with its current status.',
    tag: 'Preview /v2',
    auth: 'bearer',
    answers: {
      202: {
        description: 'Accepted: the job runs in the background.',
        headers: {
          Location: header('The job\'s poll URL (`poll_url`).', { type: 'string', pattern: '^/v2/predict/batch/' }, true),
          'Idempotent-Replayed': header('`true` when an earlier submission with this `Idempotency-Key` is answered.', { type: 'string', enum: ['true'] }),
          ...RATE_LIMIT_HEADERS,
        },
        examples: { queued: example('Queued', { job_id: JOB_ID, status: 'queued', poll_url: `/v2/predict/batch/${JOB_ID}` }) },
        links: {
          GetJob: {
            operationId: 'v2GetBatchJob',
            parameters: { job_id: '$response.body#/job_id' },
            description: 'Poll the job just accepted.',
          },
        },
      },
    },
    errors: [401, 403, 413, 415, 422, 429, 500, 503],
    errorDetails: {
      413: [{ code: 'job_too_large', params: { chars: 60000000, max: 50000000 } }],
      422: [
        { code: 'mode_not_batch' },
        { code: 'duplicate_id', params: { where: 'conversations[1].', id: 'chat-1' } },
      ],
      429: [{ code: 'per_key_limit', params: { max: 10 } }],
      503: [{ code: 'jobs_unavailable' }],
    },
    requestExamples: {
      poll: example('Two conversations, polled', {
        mode: 'batch',
        conversations: [
          { id: 'chat-1', messages: MESSAGES },
          { id: 'chat-2', messages: [{ user: 'user1', text: 'asl' }, { user: 'user2', text: '14 f u' }], age_b: '13-15', explain: true },
        ],
      }),
    },
  },
  'GET /v2/predict/batch/:job_id': {
    operationId: 'v2GetBatchJob',
    summary: "Preview: a batch job's state and, once done, its results by conversation id.",
    description: "Only the key that created the job can read it; another key's job, an unknown or expired one all answer the same 404.",
    tag: 'Preview /v2',
    auth: 'bearer',
    answers: {
      200: {
        description: 'The job.',
        headers: RATE_LIMIT_HEADERS,
        examples: {
          done: example('Done', {
            job_id: JOB_ID,
            status: 'done',
            progress: { done: 1, total: 1 },
            created_at: '2025-05-01T16:03:00.000Z',
            started_at: '2025-05-01T16:03:00.010Z',
            completed_at: '2025-05-01T16:03:00.052Z',
            expires_at: '2025-05-01T17:03:00.052Z',
            results: { 'chat-1': V2_RESULT },
          }),
        },
      },
    },
    errors: [401, 403, 404, 414, 429, 503],
    errorDetails: {
      404: [{ code: 'job_not_found' }],
      503: [{ code: 'jobs_unavailable' }],
    },
  },
};

/** `/v2/predict/batch/:job_id` as OpenAPI writes it: `/v2/predict/batch/{job_id}`. */
export const openapiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function errorResponse(doc: ErrorDoc, extraDetails: CodedError[] = [], authenticated = false): Json {
  const bodies = [...extraDetails, ...doc.details].map((e) => ({ detail: errorText(e), code: e.code }));
  const unique = bodies.filter((b, i) => bodies.findIndex((o) => o.detail === b.detail) === i);
  const examples = Object.fromEntries(unique.map((body, i) => [`e${i + 1}`, { summary: body.detail, value: body }]));
  const headers = { ...(authenticated ? RATE_LIMIT_HEADERS : {}), ...doc.headers };
  return {
    description: doc.description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { 'application/json': { schema: ERROR_REF, examples } },
  };
}

type Operation = Json & { responses?: Record<string, Json>; requestBody?: { content?: Record<string, Json> } };

/** An integer age 0 to 120, leading zeros allowed (`013` is 13), as src/scoring/ages.ts reads it. */
const AGE_NUMBER = '0*(?:[0-9]{1,2}|1[01][0-9]|120)';

/**
 * The accepted age forms as a pattern. The routes check ages in code (src/scoring/ages.ts) to answer
 * a 422 that names the forms; the document says the same as a pattern, so clients and fuzzers do not
 * send as valid what is refused. One rule it cannot say is in its description: a range's min <= max.
 */
export const AGE_PATTERN = `^[ \\t]*(?:${AGE_NUMBER}|${AGE_NUMBER}[ \\t]*-[ \\t]*${AGE_NUMBER}|[Mm][Ii][Nn][Oo][Rr]|[Aa][Dd][Uu][Ll][Tt])[ \\t]*$`;

/** A /v2 conversation's texts total at least 1 character: some message has text. (The 500,000 cap is in words.) */
const SOME_TEXT = { type: 'object', properties: { text: { type: 'string', minLength: 1 } }, required: ['text'] } as const;

/**
 * Rules the routes check in code rather than in their JSON Schema (for a detail that says more than
 * Ajv's), written into the document's request schemas: the age forms, a /v2 conversation's text, and
 * /v2's only `mode`.
 */
function statedInCode(schema: unknown, name?: string): void {
  if (typeof schema !== 'object' || schema === null) return;
  const s = schema as Json;
  if ((name === 'age_a' || name === 'age_b') && s.type === 'string') s.pattern = AGE_PATTERN;
  if (name === 'mode' && s.type === 'string') s.enum = ['batch'];
  if (name === 'messages' && s.type === 'array') s.contains = SOME_TEXT;
  for (const [key, value] of Object.entries(s.properties ?? {})) statedInCode(value, key);
  for (const key of ['items', 'then', 'else']) statedInCode(s[key]);
}

/** One generated operation, completed with what its route's schema cannot say. */
function document(generated: Operation, doc: OperationDoc): Operation {
  const { responses: generatedResponses = {}, ...rest } = generated;
  const media = rest.requestBody?.content?.['application/json'];
  statedInCode(media?.schema);
  if (media !== undefined && doc.requestExamples !== undefined) {
    delete media.example;
    media.examples = doc.requestExamples;
  }

  const responses: Record<string, Json> = {};
  for (const [status, answer] of Object.entries(doc.answers)) {
    const response = generatedResponses[status];
    if (response === undefined) continue; // the route's schema does not declare it: the contract test says so
    response.description = answer.description;
    if (answer.headers !== undefined) response.headers = answer.headers;
    if (answer.links !== undefined) response.links = answer.links;
    const content = (response.content as Record<string, Json> | undefined)?.['application/json'];
    if (content !== undefined && answer.examples !== undefined) {
      delete content.example;
      content.examples = answer.examples;
    }
    responses[status] = response;
  }
  const authenticated = doc.auth === 'bearer';
  for (const status of doc.errors) {
    const error = ERRORS[status];
    // 401 and 403 are answered before the rate limiter runs, which never counts them.
    if (error !== undefined) responses[String(status)] = errorResponse(error, doc.errorDetails?.[status], authenticated && status !== 401 && status !== 403);
  }
  for (const [range, error] of Object.entries(CATCH_ALL)) responses[range] = errorResponse(error);

  return {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description === undefined ? {} : { description: doc.description }),
    tags: [doc.tag],
    ...(doc.auth === 'public' ? { security: [] } : {}),
    ...rest,
    responses,
  };
}

function completeDocument(openapi: Json): Json {
  const paths = (openapi.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const [key, doc] of Object.entries(OPERATIONS)) {
    const [method = '', url = ''] = key.split(' ');
    const item = paths[openapiPath(url)];
    const operation = item?.[method.toLowerCase()];
    if (item !== undefined && operation !== undefined) item[method.toLowerCase()] = document(operation, doc);
  }
  return openapi;
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

/**
 * Collects the routes registered after it (register it before them) and serves the document at
 * OPENAPI_PATH, in the context it is called in: call it outside the protected one.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Conversation Risk appliance',
        version: packageVersion(),
        description:
          'Scores a whole two-party chat for predatory or harmful intent and says which speaker is the predatory party. ' +
          'Every error is `{"detail": "<reason>", "code": "<stable code>"}`. Protected routes need `Authorization: Bearer <API key>` and share one ' +
          'per-key rate limit; the key is checked before the body is read, so 401/403 win over 413 and 422.',
      },
      tags: [
        { name: 'Scoring', description: 'The current interface: conversations as text.' },
        { name: 'Model', description: 'What is serving.' },
        { name: 'Preview /v2', description: 'Closed-beta Preview: messages, real-time and batch jobs (docs/api-v2.md).' },
        { name: 'Probes', description: 'Public, never rate limited.' },
        { name: 'Meta', description: 'This document.' },
      ],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key issued by the operator.' } },
        schemas: { ErrorBody: errorBodyComponent },
      },
      security: [{ bearerAuth: [] }],
    },
    transformObject: (documentObject) =>
      'openapiObject' in documentObject ? completeDocument(documentObject.openapiObject as Json) : documentObject.swaggerObject,
  });

  let text: string | undefined;
  app.get(
    OPENAPI_PATH,
    { schema: { response: { 200: { type: 'object', description: 'The OpenAPI document.' } } } },
    async (_request, reply) => {
      // Built once, after every route is registered (the first request comes after ready).
      text ??= JSON.stringify(app.swagger());
      return reply.type('application/json; charset=utf-8').send(text);
    },
  );
}
