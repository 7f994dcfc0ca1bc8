// JSON Schemas of the v1 routes: they validate requests, serialize responses and document the API.
//
// additionalProperties decisions:
// - Request bodies: false. An unknown field is a 422 naming it, because a misspelt `age_A` silently
//   ignored would turn an age-aware prediction into a text-only one without anyone noticing.
// - Prediction responses: false, so the serializer can never leak a field the spec does not list.
// - /info: true, so a richer manifest (training summary, metrics) reaches the operator unchanged.
//
// Lengths: Ajv counts minLength/maxLength in Unicode code points (an emoji is one character), which is
// what the spec's "characters" means here; the preview cut uses the same unit.

export const MAX_CONVERSATION_CHARS = 500_000;
export const MAX_BATCH_ITEMS = 100;

/**
 * The largest body a valid single-conversation request can be: every code point of the longest
 * conversation written as a JSON surrogate-pair escape (12 bytes), plus room for the other fields.
 * Larger bodies are refused (413) before they are read in full.
 */
export const MAX_PREDICT_BODY_BYTES = MAX_CONVERSATION_CHARS * 12 + 64 * 1024;

const conversation = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_CONVERSATION_CHARS,
  description: 'Whole chat, one `speaker: text` turn per line; 1 to 500,000 characters (code points).',
} as const;

/** One definition for v1 and v2. No valid age is longer than 32 characters; the cap bounds the work. */
export const ageSchema = {
  type: 'string',
  maxLength: 32,
  description: 'An integer, `min-max` with min <= max, `minor` or `adult`. age_a is user1, age_b is user2.',
} as const;
const age = ageSchema;

export const conversationItemSchema = {
  type: 'object',
  properties: { conversation, age_a: age, age_b: age },
  required: ['conversation'],
  additionalProperties: false,
} as const;

export const predictBodySchema = conversationItemSchema;

export const batchBodySchema = {
  type: 'object',
  properties: {
    conversations: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH_ITEMS,
      // if/then/else rather than oneOf: the error then comes from the one branch that applies.
      items: { if: { type: 'string' }, then: conversation, else: conversationItemSchema },
    },
  },
  required: ['conversations'],
  additionalProperties: false,
} as const;

const probability = { type: 'number', minimum: 0, maximum: 1 } as const;

/** `?explain=true` on v1 scoring routes; query values are strings (no coercion, see app.ts). */
export const explainQuerySchema = {
  type: 'object',
  properties: {
    explain: {
      type: 'string',
      enum: ['true', 'false'],
      description: 'true adds `explanation` to every prediction: running scores per turn, first alert, evidence.',
    },
  },
  additionalProperties: false,
} as const;

/** v2 reads everything from the body: a query parameter there (v1's `?explain=true`) would be ignored, so it is a 422. */
export const noQuerySchema = { type: 'object', properties: {}, additionalProperties: false } as const;

/** An explanation's fields, for v1 (per turn, with lines) and v2 (per message) alike: numbers only, never text. */
export function explanationSchema(withLines: boolean) {
  const evidenceProperties = {
    index: { type: 'integer', minimum: 0 },
    user: { type: 'string', enum: ['user1', 'user2', 'unknown'], description: 'unknown: flat text, where no side can be told' },
    weight: { type: 'number', minimum: 0, maximum: 1, description: 'How much the running score rose after this entry.' },
    ...(withLines ? { line: { type: 'integer', minimum: 0, description: '0-based line where the turn starts.' } } : {}),
  };
  return {
    type: 'object',
    properties: {
      turn_scores: {
        type: 'array',
        items: probability,
        description: 'Per entry, in order: the score had the conversation ended after it. The last equals the score.',
      },
      ...(withLines ? { turn_lines: { type: 'array', items: { type: 'integer', minimum: 0 }, description: '0-based line where each turn starts.' } } : {}),
      first_alert_index: { type: ['integer', 'null'], minimum: 0, description: 'First entry whose turn score is above 0.5; null if none.' },
      evidence: {
        type: 'array',
        maxItems: 5,
        items: {
          type: 'object',
          properties: evidenceProperties,
          required: withLines ? ['index', 'user', 'weight', 'line'] : ['index', 'user', 'weight'],
          additionalProperties: false,
        },
        description: 'The entries after which the running score rose most, strongest first.',
      },
    },
    required: withLines ? ['turn_scores', 'turn_lines', 'first_alert_index', 'evidence'] : ['turn_scores', 'first_alert_index', 'evidence'],
    additionalProperties: false,
  } as const;
}

export const predictionSchema = {
  type: 'object',
  properties: {
    conversation_preview: { type: 'string', description: 'First 500 code points of the conversation.' },
    harmful_score: probability,
    is_harmful: { type: 'boolean', description: 'harmful_score > 0.5' },
    risk_level: { type: 'string', enum: ['Safe', 'Low Risk', 'Medium Risk', 'High Risk', 'Critical'] },
    predatory_user: { type: 'string', enum: ['user1', 'user2', 'neither'] },
    user_probabilities: {
      type: 'object',
      properties: { user1: probability, user2: probability, neither: probability },
      required: ['user1', 'user2', 'neither'],
      additionalProperties: false,
    },
    confidence: probability,
    num_segments: { type: 'integer', minimum: 1 },
    used_age_features: { type: 'boolean' },
    explanation: { ...explanationSchema(true), description: 'Only with ?explain=true.' },
  },
  required: [
    'conversation_preview',
    'harmful_score',
    'is_harmful',
    'risk_level',
    'predatory_user',
    'user_probabilities',
    'confidence',
    'num_segments',
    'used_age_features',
  ],
  additionalProperties: false,
} as const;

export const batchResponseSchema = {
  type: 'object',
  properties: { predictions: { type: 'array', items: predictionSchema } },
  required: ['predictions'],
  additionalProperties: false,
} as const;

export const healthSchema = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['healthy', 'degraded'] } },
  required: ['status'],
  additionalProperties: false,
} as const;

/** What /readyz names while not ready: the model, or a shared dependency that is down. */
export const NOT_READY_REASONS = ['model_not_loaded', 'redis_unreachable'] as const;
export type NotReadyReason = (typeof NOT_READY_REASONS)[number];

export const readinessSchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['healthy', 'degraded'] },
    reasons: {
      type: 'array',
      items: { type: 'string', enum: NOT_READY_REASONS },
      description: 'Present while degraded: why the service is not ready.',
    },
  },
  required: ['status'],
  additionalProperties: false,
} as const;

export const infoSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    version: { type: 'string' },
    contract_version: { type: 'integer' },
    files: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        properties: { sha256: { type: 'string' }, bytes: { type: 'integer' } },
        additionalProperties: false,
      },
    },
    metrics: { type: 'object', additionalProperties: true },
  },
  required: ['name', 'version', 'files'],
  additionalProperties: true,
} as const;

/** Body types the schemas above guarantee once validation passed. */
export interface ConversationItem {
  conversation: string;
  age_a?: string;
  age_b?: string;
}
export type PredictBody = ConversationItem;
export interface BatchBody {
  conversations: Array<string | ConversationItem>;
}
export interface ExplainQuery {
  explain?: 'true' | 'false';
}
