// Error mapping: every failure becomes {detail, code} with the right status; a 500 is logged by type and
// stack frames only, and neither the answer nor the log quotes the error's message.
import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { HttpError, registerErrorHandling, toHttpError } from '../../../src/http/errors.ts';
import { jsonPointerToPath } from '../../../src/http/validation-detail.ts';
import { ScoringError } from '../../../src/scoring/types.ts';
import { captureLogs } from '../../helpers/app.ts';

describe('error mapping', () => {
  it.each([
    ['model_unavailable', 503, '30'],
    ['overloaded', 503, '1'],
    ['timeout', 503, '1'],
    ['interrupted', 503, '1'],
    ['internal', 500, undefined],
  ] as const)('maps the scoring error %s to %i (Retry-After %s)', (kind, status, retry) => {
    const e = toHttpError(new ScoringError(kind, 'text that must not leak'), 1024);
    expect(e.statusCode).toBe(status);
    expect(e.headers['retry-after']).toBe(retry);
    expect(e.detail).not.toContain('leak');
  });

  it('turns JSON pointers into field paths', () => {
    expect(jsonPointerToPath('/conversations/3/age_a')).toBe('conversations[3].age_a');
    expect(jsonPointerToPath('', 'conversation')).toBe('conversation');
    expect(jsonPointerToPath('')).toBe('body');
    expect(jsonPointerToPath('/explain', undefined, 'query')).toBe('query.explain');
  });

  it('answers an unexpected exception with 500 and a fixed detail, logging no message text', async () => {
    const { logger, lines } = captureLogs();
    const app = Fastify({ loggerInstance: logger }) as unknown as FastifyInstance;
    registerErrorHandling(app, 1024);
    app.get('/boom', async () => {
      throw new Error('conversation text MARKER-500 in a message');
    });
    app.get('/teapot', async () => {
      throw new HttpError({ code: 'mode_not_batch' });
    });
    const res = await app.inject({ method: 'GET', url: '/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ detail: 'Internal server error', code: 'internal_error' });
    const bug = lines.map((l) => JSON.parse(l)).find((l) => l.bug !== undefined);
    expect(bug?.bug.type).toBe('Error');
    expect(bug?.bug.stack).toMatch(/at /);
    for (const line of lines) expect(line).not.toContain('MARKER-500');
    expect((await app.inject({ method: 'GET', url: '/teapot' })).json()).toEqual({ detail: 'mode: must be "batch" (the only mode of this Preview; streaming is not available)', code: 'mode_not_batch' });
    await app.close();
  });

  it('answers a served path asked with another method 405 with Allow, and an unknown path 404', async () => {
    const app = Fastify() as unknown as FastifyInstance;
    registerErrorHandling(app, 1024);
    app.post('/predict', async () => ({}));
    await app.register(async (scope) => {
      scope.get('/v2/predict/batch/:job_id', async () => ({}));
    });
    const get = await app.inject({ method: 'GET', url: '/predict?explain=true' });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(get.json()).toEqual({ detail: 'Method not allowed', code: 'method_not_allowed' });
    const del = await app.inject({ method: 'DELETE', url: '/v2/predict/batch/abc' });
    expect(del.statusCode).toBe(405);
    expect(del.headers.allow).toBe('GET, HEAD');
    expect((await app.inject({ method: 'GET', url: '/v2/predict/batch/abc/more' })).statusCode).toBe(404);
    const unknown = await app.inject({ method: 'GET', url: '/nothing' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers.allow).toBeUndefined();
    await app.close();
  });
});
