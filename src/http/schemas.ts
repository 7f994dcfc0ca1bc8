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
