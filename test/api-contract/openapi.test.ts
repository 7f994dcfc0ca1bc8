// GET /openapi.json: a valid OpenAPI 3.1 document, public, listing every route the app serves, whose
// security, errors, headers and examples say what the service does, and whose fields are the spec's
// (docs/spec/conversation-risk-api.md, its field tables read here). The fuzzer (scripts/fuzz/
// schemathesis.sh, CI) then checks the running service against the same document at length.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGE_PATTERN, OPENAPI_PATH, OPERATIONS, openapiPath } from '../../src/http/openapi.ts';
import { DEFAULT_MODEL_DIR } from '../../src/config.ts';
import { buildMetricsServer } from '../../src/http/metrics-listener.ts';
import { parseAge } from '../../src/scoring/ages.ts';
import { ageSchema } from '../../src/http/schemas.ts';
import { bearer, REPO_ROOT, startTestApp, type TestApp } from '../helpers/app.ts';

type Json = Record<string, any>;

let t: TestApp;
let doc: Json;
beforeAll(async () => {
  t = await startTestApp();
  doc = (await t.app.inject({ method: 'GET', url: OPENAPI_PATH })).json();
});
afterAll(async () => t.close());

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

/** Every operation of the document: `METHOD /path` -> operation. */
function operations(d: Json): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const [path, item] of Object.entries<Json>(d.paths)) {
    for (const method of METHODS) if (item[method] !== undefined) out.set(`${method.toUpperCase()} ${path}`, item[method]);
  }
  return out;
}

/**
 * Every route the app serves, read from Fastify's own route tree (printRoutes), HEAD routes apart:
 * Fastify adds one to each GET. Lines look like `│   └── /batch (POST)`, four characters per level.
 */
function servedRoutes(tree: string): string[] {
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)(?:├── |└── )(\S+)(?: \(([^)]+)\))?$/.exec(line.replace(/\u00a0/g, ' '));
    if (m === null) continue;
    const depth = (m[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(m[2] ?? '');
    for (const method of (m[3] ?? '').split(', ').filter((x) => x !== '' && x !== 'HEAD')) routes.push(`${method} ${stack.join('')}`);
  }
  return routes.sort();
}

const jsonSchemaOf = (response: Json | undefined) => response?.content?.['application/json']?.schema as Json | undefined;
const resolve = (schema: Json | undefined): Json | undefined =>
  schema?.$ref === '#/components/schemas/ErrorBody' ? doc.components.schemas.ErrorBody : schema;
const op = (key: string) => operations(doc).get(key) as Json;
const responseSchema = (key: string, status: string) => resolve(jsonSchemaOf(op(key).responses[status]));
const bodySchema = (key: string) => op(key).requestBody.content['application/json'].schema as Json;

describe('GET /openapi.json', () => {
  it('answers 200 JSON without a key, with the security headers of every other route and no rate limit', async () => {
    const res = await t.app.inject({ method: 'GET', url: OPENAPI_PATH });
    const health = await t.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const securityHeaders = Object.keys(health.headers).filter((h) => !['content-type', 'content-length', 'date', 'connection', 'keep-alive'].includes(h));
    expect(securityHeaders).toEqual(expect.arrayContaining(['strict-transport-security', 'x-content-type-options', 'content-security-policy']));
    for (const h of securityHeaders) expect(res.headers[h], h).toBe(health.headers[h]);
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    // A key (even a wrong one) changes nothing: the route is outside the protected context.
    const withKey = await t.app.inject({ method: 'GET', url: OPENAPI_PATH, headers: bearer('not-a-key-at-all-0000') });
    expect(withKey.statusCode).toBe(200);
    expect(withKey.body).toBe(res.body);
  });

  it('is not served on the metrics port', async () => {
    const metricsServer = buildMetricsServer(t.metrics, {});
    try {
      expect((await metricsServer.inject({ method: 'GET', url: OPENAPI_PATH })).statusCode).toBe(404);
    } finally {
      await metricsServer.close();
    }
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('lists every route the app serves, and nothing else', () => {
    // The review console's page and files (src/routes/console.ts) are served but are no API: not documented.
    const served = servedRoutes(t.app.printRoutes({ commonPrefix: false })).filter((r) => !/^GET \/console(\/|$)/.test(r));
    expect(served).toContain('POST /v2/predict/batch');
    expect([...operations(doc).keys()].sort()).toEqual(served.map((r) => openapiPath(r)).sort());
    // And each is described here (summary, errors, examples), not left as generated.
    expect(Object.keys(OPERATIONS).sort()).toEqual(served);
    for (const [key, operation] of operations(doc)) {
      expect(operation.operationId, key).toBeTypeOf('string');
      expect(operation.summary, key).toBeTypeOf('string');
    }
  });

  it('says which routes need the bearer key, as the service behaves', async () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    for (const [key, operation] of operations(doc)) {
      const [method, path] = key.split(' ') as [string, string];
      const url = path.replace('{job_id}', 'job_0123');
      const res = await t.app.inject({ method: method as 'GET', url, ...(method === 'POST' ? { payload: {} } : {}) });
      if (operation.security === undefined) {
        expect(res.statusCode, key).toBe(401);
        expect(res.headers['www-authenticate'], key).toBe('Bearer');
        expect(operation.responses['401'], key).toBeDefined();
      } else {
        expect(operation.security, key).toEqual([]);
        expect(res.statusCode, key).not.toBe(401);
      }
    }
  });

  it('documents every error as {detail, code}: 4XX and 5XX on every route, each status with its headers', () => {
    expect(doc.components.schemas.ErrorBody).toEqual({
      type: 'object',
      description: expect.any(String),
      properties: { detail: { type: 'string' }, code: { type: 'string', description: expect.any(String) } },
      required: ['detail', 'code'],
      additionalProperties: false,
    });
    for (const [key, operation] of operations(doc)) {
      expect(Object.keys(operation.responses), key).toEqual(expect.arrayContaining(['4XX', '5XX']));
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        if (/^[2]/.test(status) || (key === 'GET /readyz' && status === '503')) continue;
        expect(jsonSchemaOf(response), `${key} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorBody' });
        if (status === '429' || (status === '503' && operation.security === undefined)) {
          expect(response.headers['Retry-After'], `${key} ${status}`).toMatchObject({ required: true, schema: { type: 'integer' } });
        }
      }
      if (operation.security === undefined) {
        for (const status of ['401', '403', '429']) expect(operation.responses[status], `${key} ${status}`).toBeDefined();
        expect(operation.responses['401'].headers['WWW-Authenticate'].required).toBe(true);
        const success = Object.keys(operation.responses).find((s) => s.startsWith('2')) as string;
        expect(Object.keys(operation.responses[success].headers), key).toEqual(
          expect.arrayContaining(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'RateLimit', 'RateLimit-Policy']),
        );
      }
    }
    for (const key of ['POST /predict', 'POST /batch_predict', 'POST /v2/predict']) {
      expect(op(key).responses['200'].headers['X-Model-Version'].required, key).toBe(true);
    }
    expect(op('POST /v2/predict/batch').responses['202'].headers.Location.required).toBe(true);
    expect(op('POST /v2/predict/batch').responses['202'].links.GetJob.operationId).toBe(op('GET /v2/predict/batch/{job_id}').operationId);
  });
});

describe('examples', () => {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  const examplesOf = (media: Json | undefined): Array<[string, unknown]> =>
    Object.entries<Json>(media?.examples ?? {}).map(([name, e]) => [name, e.value]);

  it('every example of a request or an answer is valid against its own schema', () => {
    let count = 0;
    for (const [key, operation] of operations(doc)) {
      const media = operation.requestBody?.content?.['application/json'];
      const places: Array<[string, Json | undefined]> = [[`${key} request`, media]];
      for (const [status, response] of Object.entries<Json>(operation.responses)) places.push([`${key} ${status}`, response.content?.['application/json']]);
      for (const [where, m] of places) {
        if (m === undefined) continue;
        const validate = ajv.compile(resolve(m.schema) ?? {});
        for (const [name, value] of examplesOf(m)) {
          count++;
          expect(validate(value) ? [] : validate.errors, `${where} example ${name}`).toEqual([]);
        }
      }
    }
    expect(count).toBeGreaterThan(30);
  });

  it("the /info example is the shipped model's manifest, abridged (a release that forgets it fails here)", () => {
    const shipped = JSON.parse(readFileSync(join(DEFAULT_MODEL_DIR, 'manifest.json'), 'utf8')) as Json;
    const examples = examplesOf(op('GET /info').responses['200'].content['application/json']);
    expect(examples.map(([, value]) => value)).toEqual([{
      name: shipped.name,
      version: shipped.version,
      contract_version: shipped.contract_version,
      files: { 'model.onnx': shipped.files['model.onnx'] },
    }]);
  });

  it("each request example answers the documented success, with the documented headers and an answer valid against the success schema", async () => {
    for (const [key, operation] of operations(doc)) {
      const media = operation.requestBody?.content?.['application/json'];
      const [method, path] = key.split(' ') as [string, string];
      for (const [name, value] of examplesOf(media)) {
        const res = await t.app.inject({ method: method as 'POST', url: path, headers: bearer(), payload: value as Json });
        const status = String(res.statusCode);
        const response = operation.responses[status];
        expect(response, `${key} ${name}: ${status} ${res.body}`).toBeDefined();
        expect(status, `${key} ${name}`).toMatch(/^2/);
        const validate = ajv.compile(resolve(jsonSchemaOf(response)) ?? {});
        expect(validate(res.json()) ? [] : validate.errors, `${key} ${name}`).toEqual([]);
        for (const [header, spec] of Object.entries<Json>(response.headers ?? {})) {
          if (spec.required === true) expect(res.headers[header.toLowerCase()], `${key} ${name} ${header}`).toBeDefined();
        }
        if (key === 'POST /v2/predict/batch') {
          const poll = await t.app.inject({ method: 'GET', url: String(res.headers.location), headers: bearer() });
          const pollValidate = ajv.compile(responseSchema('GET /v2/predict/batch/{job_id}', '200') ?? {});
          expect(pollValidate(poll.json()) ? [] : pollValidate.errors).toEqual([]);
        }
      }
    }
  });
});

describe('rules the routes check in code, stated in the document', () => {
  it("the age pattern accepts what the service accepts (but a range's min > max, said in words)", () => {
    const pattern = new RegExp(AGE_PATTERN);
    const values = ['', ' ', '-', 'minor', 'MINOR', ' Adult\t', 'adults', 'minor-adult', '1e2', '+5', '5.0', '٣', '１３', '\u00a013'];
    for (let n = 0; n <= 130; n++) values.push(String(n), `0${n}`, `00${n}`, ` ${n} `, `${n}-${n + 1}`, `${n + 1}-${n}`, `${n} - 120`, `0-${n}`);
    for (const value of values) {
      const accepted = parseAge(value) !== undefined;
      const reversedRange = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(value);
      const minAboveMax = reversedRange !== null && Number(reversedRange[1]) > Number(reversedRange[2]);
      // What the pattern admits, the service accepts; what the service accepts in ASCII spacing, the pattern admits.
      if (pattern.test(value) && !minAboveMax) expect(accepted, JSON.stringify(value)).toBe(true);
      if (accepted && !/[^\x20-\x7e\t]/.test(value)) expect(pattern.test(value), JSON.stringify(value)).toBe(true);
    }
    for (const key of ['POST /predict', 'POST /v2/predict']) expect(bodySchema(key).properties.age_b.pattern, key).toBe(AGE_PATTERN);
    expect(bodySchema('POST /batch_predict').properties.conversations.items.else.properties.age_a.pattern).toBe(AGE_PATTERN);
    expect(bodySchema('POST /v2/predict/batch').properties.conversations.items.properties.age_a.pattern).toBe(AGE_PATTERN);
  });

  it("a /v2 conversation needs some text, and only /v2's mode is batch", () => {
    const messages = bodySchema('POST /v2/predict').properties.messages;
    expect(messages.contains).toMatchObject({ properties: { text: { minLength: 1 } }, required: ['text'] });
    expect(bodySchema('POST /v2/predict/batch').properties.conversations.items.properties.messages).toEqual(messages);
    expect(bodySchema('POST /v2/predict/batch').properties.mode.enum).toEqual(['batch']);
  });

  it('are written into the document only: the routes still validate with their own schemas and details', async () => {
    expect(ageSchema).not.toHaveProperty('pattern');
    const res = await t.app.inject({ method: 'POST', url: '/predict', headers: bearer(), payload: { conversation: 'user1: hi', age_b: 'x' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/^age_b must be an integer age from 0 to 120/);
    const empty = await t.app.inject({ method: 'POST', url: '/v2/predict', headers: bearer(), payload: { messages: [{ user: 'user1', text: '' }] } });
    expect(empty.json()).toEqual({ detail: 'messages: text must total 1 to 500000 characters (got 0)', code: 'messages_length' });
  });
});

// ---- The spec's field tables ------------------------------------------------------------------------

const SPEC = readFileSync(`${REPO_ROOT}docs/spec/conversation-risk-api.md`, 'utf8');

/** The rows of the first table under the heading that starts with `heading`, as {column: cell}. */
function specTable(heading: string): Array<Record<string, string>> {
  const start = SPEC.split('\n').findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').startsWith(heading));
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const lines = SPEC.split('\n').slice(start + 1);
  const first = lines.findIndex((l) => l.startsWith('|'));
  const table: string[] = [];
  for (const l of lines.slice(first)) {
    if (!l.startsWith('|')) break;
    table.push(l);
  }
  const cells = (l: string) => l.split('|').slice(1, -1).map((c) => c.trim());
  const [head = '', , ...rows] = table;
  const columns = cells(head).map((c) => c.toLowerCase());
  return rows.map((r) => Object.fromEntries(cells(r).map((c, i) => [columns[i] ?? String(i), c])));
}

/** The JSON Schema type a spec cell names: `float (0 to 1)` -> number, `bool` -> boolean. */
function specType(cell: string): string {
  const word = /^(\w+)/.exec(cell)?.[1] ?? '';
  const map: Record<string, string> = { string: 'string', float: 'number', bool: 'boolean', int: 'integer', integer: 'integer', object: 'object', array: 'array' };
  expect(map[word], `spec type "${cell}"`).toBeDefined();
  return map[word] as string;
}

/** The backquoted names in a spec cell: "One of `user1`, `user2`, `neither`" -> [user1, user2, neither]. */
const quoted = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);

/** The spec table's fields are the schema's: each present, of the spec's type, required in an answer. */
function expectFields(schema: Json, rows: Array<Record<string, string>>, where: string, answer: boolean): void {
  for (const row of rows) {
    const name = row.field as string;
    const property = schema.properties?.[name];
    expect(property, `${where}.${name}`).toBeDefined();
    expect(property.type, `${where}.${name}`).toBe(specType(row.type as string));
    if (answer) expect(schema.required, `${where}: ${name} is always answered`).toContain(name);
  }
}

describe("the spec's fields", () => {
  it('Prediction: /predict and every /batch_predict item answer exactly the spec fields (plus the opt-in explanation)', () => {
    const rows = specTable('Prediction (');
    const prediction = responseSchema('POST /predict', '200') as Json;
    expectFields(prediction, rows, 'Prediction', true);
    expect(Object.keys(prediction.properties).sort()).toEqual([...rows.map((r) => r.field), 'explanation'].sort());
    expect(prediction.required).not.toContain('explanation');
    expect(prediction.additionalProperties).toBe(false);
    const rule = Object.fromEntries(rows.map((r) => [r.field, r.rule ?? '']));
    // "0.0 to 1.0"
    for (const f of ['harmful_score', 'confidence']) expect(prediction.properties[f], f).toMatchObject({ minimum: 0, maximum: 1 });
    expect(prediction.properties.predatory_user.enum).toEqual(quoted(rule.predatory_user as string));
    expect(Object.keys(prediction.properties.user_probabilities.properties)).toEqual(quoted(rule.user_probabilities as string));
    expect(prediction.properties.user_probabilities.required).toEqual(quoted(rule.user_probabilities as string));
    for (const p of Object.values<Json>(prediction.properties.user_probabilities.properties)) expect(p.type).toBe('number');
    expect(prediction.properties.risk_level.enum).toEqual(specTable('Risk level bands').map((r) => r.risk_level));

    const batch = responseSchema('POST /batch_predict', '200') as Json;
    expect(batch.required).toEqual(['predictions']);
    expect(batch.properties.predictions.type).toBe('array');
    expect(batch.properties.predictions.items).toEqual(prediction);
  });

  it('Conversation input item: the /predict body and each /batch_predict item, with the spec limits', () => {
    const rows = specTable('Conversation input item');
    const predict = bodySchema('POST /predict');
    expectFields(predict, rows, '/predict body', false);
    expect(Object.keys(predict.properties).sort()).toEqual(rows.map((r) => r.field).sort());
    expect(predict.required).toEqual(rows.filter((r) => r.required === 'yes').map((r) => r.field));
    expect(predict.additionalProperties).toBe(false);
    // "1 to 500,000 characters"
    expect(predict.properties.conversation).toMatchObject({ minLength: 1, maxLength: 500_000 });

    const batch = bodySchema('POST /batch_predict');
    expect(batch.required).toEqual(['conversations']);
    // Limits: "Batch size | 1 to 100 items"
    expect(batch.properties.conversations).toMatchObject({ type: 'array', minItems: 1, maxItems: 100 });
    // "either a plain conversation string or an object with conversation (required) and optional age_a / age_b"
    const item = batch.properties.conversations.items;
    expect(item.then).toMatchObject({ type: 'string', minLength: 1, maxLength: 500_000 });
    expect(item.else).toEqual(predict);
  });

  it('Health status and Error body', () => {
    const [status] = specTable('Health status');
    const health = responseSchema('GET /health', '200') as Json;
    expect(health.required).toEqual(['status']);
    expect(health.properties.status.type).toBe(specType(status?.type as string));
    expect(health.properties.status.enum).toEqual(quoted(status?.values as string));
    expectFields(doc.components.schemas.ErrorBody, specTable('Error body'), 'ErrorBody', true);
  });

  it('Preview single prediction: /v2/predict answers the spec fields, and no conversation_preview', () => {
    const rows = specTable('Preview: single prediction response');
    const v2 = responseSchema('POST /v2/predict', '200') as Json;
    expectFields(v2, rows, '/v2/predict', true);
    expect(v2.properties.harmfulness_score).toMatchObject({ minimum: 0, maximum: 1 }); // "float (0 to 1)"
    expect(v2.properties.predatory_user.enum).toEqual(quoted(rows.find((r) => r.field === 'predatory_user')?.type as string));
    expect(Object.keys(v2.properties.user_probabilities.properties)).toEqual(quoted(rows.find((r) => r.field === 'user_probabilities')?.type as string));
    expect(v2.properties.conversation_preview).toBeUndefined();
    expect(v2.properties.harmful_score).toBeUndefined();
    // The spec leaves these open; README decides: num_segments and used_age_features yes, explanation opt-in.
    expect(Object.keys(v2.properties).sort()).toEqual([...rows.map((r) => r.field), 'num_segments', 'used_age_features', 'explanation'].sort());
    expect(v2.additionalProperties).toBe(false);
  });

  it('Preview batch: the body of /v2/predict/batch and its items', () => {
    const body = bodySchema('POST /v2/predict/batch');
    // "Request body: JSON object with `conversations` (array ...), `mode` (string; ...) and `webhook_url` (string, URL)."
    const line = SPEC.split('\n').find((l) => l.startsWith('- Request body: JSON object with `conversations`')) as string;
    expect(line).toBeDefined();
    const fields = [...line.matchAll(/`(\w+)` \((\w+)/g)].map((m) => [m[1] as string, m[2] as string] as const);
    expect(fields.map(([f]) => f)).toEqual(['conversations', 'mode', 'webhook_url']);
    for (const [field, type] of fields) expect(body.properties[field]?.type, field).toBe(specType(type));
    expect(Object.keys(body.properties).sort()).toEqual(fields.map(([f]) => f).sort());
    const item = body.properties.conversations.items;
    expectFields(item, specTable('Preview: batch request item'), '/v2/predict/batch item', false);
    expect(item.required).toEqual(expect.arrayContaining(['id', 'messages']));
    expect(bodySchema('POST /v2/predict').properties.messages).toEqual(item.properties.messages);
  });

  it("each endpoint's authentication and error statuses are the spec's", () => {
    for (const [path, key] of [
      ['GET /health', 'GET /health'],
      ['POST /predict', 'POST /predict'],
      ['POST /batch_predict', 'POST /batch_predict'],
    ] as const) {
      const rows = Object.fromEntries(specTable(path).map((r) => [r.item, r.value ?? '']));
      const operation = op(key);
      if ((rows.Authentication ?? '').startsWith('none')) expect(operation.security, key).toEqual([]);
      else expect(operation.security, key).toBeUndefined(); // the document's default: bearer
      if (rows.Errors !== undefined) {
        for (const status of rows.Errors.split(',').map((s: string) => s.trim())) expect(operation.responses[status], `${key} ${status}`).toBeDefined();
      }
    }
    // The spec's error table applies to both scoring routes.
    for (const row of specTable('Errors')) {
      const status = (/^\d+/.exec(row.status ?? '') ?? [''])[0];
      for (const key of ['POST /predict', 'POST /batch_predict']) expect(op(key).responses[status], `${key} ${status}`).toBeDefined();
    }
    // "The detail text for this case is `API key required (Bearer token)`."
    const unauthorized = op('POST /predict').responses['401'].content['application/json'].examples;
    expect(Object.values<Json>(unauthorized).map((e) => e.value.detail)).toContain('API key required (Bearer token)');
  });
});
