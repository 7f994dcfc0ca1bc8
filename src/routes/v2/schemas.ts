// JSON Schemas of the Preview /v2 routes: they validate requests, serialize responses (so no field
// outside them, such as conversation text, can leak) and document the API. See docs/api-v2.md.
import { MAX_CONVERSATION_CHARS, ageSchema, explanationSchema, predictionSchema } from '../../http/schemas.ts';
import type { Message } from './messages.ts';

/** Most messages in one conversation: with the 500,000-character cap, about 5 characters a message. */
export const MAX_MESSAGES = 100_000;
export const MAX_ID_CHARS = 256;
export const MAX_WEBHOOK_URL_CHARS = 2048;
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;
export { MAX_CONVERSATION_CHARS };

const age = ageSchema;

const message = {
  type: 'object',
  properties: {
    user: { type: 'string', enum: ['user1', 'user2'] },
    text: {
      type: 'string',
      maxLength: MAX_CONVERSATION_CHARS,
      description: 'What the user wrote. Line breaks inside it are read as spaces.',
    },
    timestamp: { type: 'string', format: 'date-time', description: 'RFC 3339 date-time with offset; not scored.' },
  },
  required: ['user', 'text'],
  additionalProperties: false,
} as const;

const messages = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_MESSAGES,
  items: message,
  description: 'Turns in order. Their text totals 1 to 500,000 characters (code points).',
} as const;

const explain = {
  type: 'boolean',
  description: 'true adds `explanation`: the running score after every message, the first alert and the evidence.',
} as const;

export const v2PredictBodySchema = {
  type: 'object',
  properties: { messages, age_a: age, age_b: age, explain },
  required: ['messages'],
  additionalProperties: false,
} as const;

export function batchBodySchema(maxItems: number) {
  return {
    type: 'object',
    properties: {
      conversations: {
        type: 'array',
        minItems: 1,
        maxItems,
        items: {
          type: 'object',
          properties: {
            id: { type: 'string', minLength: 1, maxLength: MAX_ID_CHARS, description: 'Caller-chosen, unique within the job.' },
            messages,
            age_a: age,
            age_b: age,
            explain,
          },
          required: ['id', 'messages'],
          additionalProperties: false,
        },
      },
      mode: { type: 'string', maxLength: 32, description: 'Must be "batch".' },
      webhook_url: { type: 'string', maxLength: MAX_WEBHOOK_URL_CHARS },
    },
    required: ['conversations', 'mode'],
    additionalProperties: false,
  } as const;
}

export const batchHeadersSchema = {
  type: 'object',
  properties: { 'idempotency-key': { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_CHARS } },
} as const;

export const jobParamsSchema = {
  type: 'object',
  properties: { job_id: { type: 'string', maxLength: 64 } },
  required: ['job_id'],
} as const;

// The v1 prediction's fields, less the preview, with the score under its Preview name and the
// explanation indexed by message (v1's carries turn lines).
const { conversation_preview: _preview, harmful_score, explanation: _v1Explanation, ...sharedScoreProperties } = predictionSchema.properties;
const scoreProperties = {
  harmfulness_score: { ...harmful_score, description: 'Probability of harmful intent (v1: harmful_score).' },
  ...sharedScoreProperties,
  is_harmful: { type: 'boolean', description: 'harmfulness_score > 0.5' },
  explanation: { ...explanationSchema(false), description: 'Only when the request set explain: true.' },
} as const;

const scoreRequired = [
  'harmfulness_score',
  'is_harmful',
  'risk_level',
  'predatory_user',
  'user_probabilities',
  'confidence',
  'num_segments',
  'used_age_features',
] as const;

/** A job's result for one conversation: scores only. */
export const v2ResultSchema = {
  type: 'object',
  properties: scoreProperties,
  required: scoreRequired,
  additionalProperties: false,
} as const;

export const v2PredictionSchema = {
  type: 'object',
  properties: { ...scoreProperties, latency_ms: { type: 'integer', minimum: 0 } },
  required: [...scoreRequired, 'latency_ms'],
  additionalProperties: false,
} as const;

export const jobAcceptedSchema = {
  type: 'object',
  properties: {
    job_id: { type: 'string' },
    status: { type: 'string', enum: ['queued', 'running', 'done', 'failed'] },
    poll_url: { type: 'string' },
  },
  required: ['job_id', 'status', 'poll_url'],
  additionalProperties: false,
} as const;

export const jobSchema = {
  type: 'object',
  properties: {
    job_id: { type: 'string' },
    status: { type: 'string', enum: ['queued', 'running', 'done', 'failed'] },
    progress: {
      type: 'object',
      properties: { done: { type: 'integer' }, total: { type: 'integer' } },
      required: ['done', 'total'],
      additionalProperties: false,
    },
    created_at: { type: 'string', format: 'date-time' },
    started_at: { type: 'string', format: 'date-time' },
    completed_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time' },
    results: { type: 'object', additionalProperties: v2ResultSchema, description: 'Keyed by conversation id.' },
    error: { type: 'string' },
    webhook: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
        attempts: { type: 'integer' },
        last_error: { type: 'string' },
      },
      required: ['status', 'attempts'],
      additionalProperties: false,
    },
  },
  required: ['job_id', 'status', 'progress', 'created_at'],
  additionalProperties: false,
} as const;

export interface V2PredictBody {
  messages: Message[];
  age_a?: string;
  age_b?: string;
  explain?: boolean;
}

export interface BatchConversation extends V2PredictBody {
  id: string;
}

export interface BatchBody {
  conversations: BatchConversation[];
  mode: string;
  webhook_url?: string;
}
