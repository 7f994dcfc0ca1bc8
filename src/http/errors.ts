// Maps every failure to `{detail}` with the right status. Details are written here, never copied from
// an error message, so no stack trace, body fragment or key can reach a client or a log through them.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { JOB_RETRY_AFTER_S, JobsUnavailableError, type RejectReason } from '../jobs/types.ts';
import { describeBug } from '../ops/describe-bug.ts';
import { ConnectionClosedError } from './connection.ts';
import { ScoringError } from '../scoring/types.ts';

/** An error whose status and detail are meant for the client as they are. */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly detail: string;
  readonly headers: Record<string, string>;
  /** Refused before its body was read: read and drop the rest so the client sees this answer. */
  readonly drainBody: boolean;
  constructor(statusCode: number, detail: string, headers: Record<string, string> = {}, options: { drainBody?: boolean } = {}) {
    super(detail);
    this.name = 'HttpError';
    this.statusCode = statusCode;
    this.detail = detail;
    this.headers = headers;
    this.drainBody = options.drainBody ?? false;
  }
}

export const errorBodySchema = {
  $id: 'ErrorBody',
  type: 'object',
  description: 'Every error answer: a human-readable reason, never echoing the request body.',
  properties: { detail: { type: 'string' } },
  required: ['detail'],
  additionalProperties: false,
} as const;

/** Seconds a client should wait before retrying a 503 caused by load. */
export const RETRY_AFTER_BUSY_S = 1;

interface AjvLikeError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Where a schema error was found: Fastify's `validationContext` says `querystring` for the URL's query. */
export type ValidationPlace = 'body' | 'query';

/** `/conversations/3/age_a` -> `conversations[3].age_a`; the root is `body`, or `query` for the query string. */
export function jsonPointerToPath(pointer: string, extra?: string, root: ValidationPlace = 'body'): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (extra !== undefined) parts.push(extra);
  let path = root === 'query' ? 'query' : '';
  for (const part of parts) path += /^\d+$/.test(part) ? `[${part}]` : path === '' ? part : `.${part}`;
  return path === '' ? 'body' : path;
}

/** One readable sentence naming the field, from the first schema error that is not a branch marker. */
export function validationDetail(errors: AjvLikeError[], place: ValidationPlace = 'body'): string {
  // if/then/else reports the inner failure and then an `if` error that only says a branch failed.
  const e = errors.find((x) => x.keyword !== 'if' && x.keyword !== 'anyOf' && x.keyword !== 'oneOf') ?? errors[0];
  if (e === undefined) return `${place}: is invalid`;
  const p = e.params;
  const at = (extra?: string) => jsonPointerToPath(e.instancePath, extra, place);
  switch (e.keyword) {
    case 'required':
      return `${at(String(p.missingProperty))}: is required`;
    case 'additionalProperties':
      return place === 'query'
        ? `query: unknown parameter "${String(p.additionalProperty).slice(0, 64)}"`
        : `${at()}: unknown field "${String(p.additionalProperty).slice(0, 64)}"`;
    case 'minLength':
      return p.limit === 1
        ? `${at()}: must not be empty`
        : `${at()}: must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `${at()}: must be at most ${String(p.limit)} characters`;
    case 'minItems':
      return `${at()}: must hold at least ${String(p.limit)} item(s)`;
    case 'maxItems':
      return `${at()}: must hold at most ${String(p.limit)} items`;
    case 'type':
      // The whole body: a text/plain or type-less body reaches validation as a string or nothing.
      if (place === 'body' && e.instancePath === '') return 'body: must be a JSON object (Content-Type: application/json)';
      return `${at()}: must be ${String(p.type)}`;
    default:
      return `${at()}: ${e.message ?? 'is invalid'}`;
  }
}

const GENERIC_DETAIL: Record<number, string> = {
  400: 'Bad request',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'Request timeout',
  411: 'Content-Length required',
  413: 'Request body too large',
  414: 'URI too long',
  415: 'Unsupported media type: send application/json',
  431: 'Request headers too large',
};

/** 503 while the model is not loaded; a reload is slow, so clients are told to wait longer. */
export const modelUnavailable = () =>
  new HttpError(503, 'Model is not loaded; the service is degraded', { 'retry-after': '30' });

/** Every route's error responses: `{detail}` for any 4xx and 5xx. */
export const errorResponses = { '4xx': errorBodySchema, '5xx': errorBodySchema } as const;

/** Status and Retry-After for each reason a v2 job is refused; the detail comes with the reason. */
const JOB_REJECTION: Record<RejectReason, { status: number; retryAfter?: number }> = {
  invalid_webhook: { status: 422 },
  too_many_items: { status: 422 },
  idempotency_mismatch: { status: 422 },
  too_large: { status: 413 },
  // The caller's own quota: it frees up when one of its jobs finishes.
  per_key_limit: { status: 429, retryAfter: JOB_RETRY_AFTER_S },
  // Capacity of the whole service, shared by every key: the same answer as a full scoring queue.
  queue_full: { status: 503, retryAfter: JOB_RETRY_AFTER_S },
  model_unavailable: { status: 503, retryAfter: 30 },
  shutting_down: { status: 503, retryAfter: JOB_RETRY_AFTER_S },
};

export function jobRejection(reason: RejectReason, detail: string): HttpError {
  if (reason === 'model_unavailable') return modelUnavailable();
  const { status, retryAfter } = JOB_REJECTION[reason];
  return new HttpError(status, detail, retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) });
}

function scoringAnswer(err: ScoringError): HttpError {
  const retry = { 'retry-after': String(RETRY_AFTER_BUSY_S) };
  switch (err.kind) {
    case 'model_unavailable':
      return modelUnavailable();
    case 'overloaded':
      return new HttpError(503, 'Scoring queue is full; retry later', retry);
    case 'timeout':
      return new HttpError(503, 'Scoring did not finish in time; retry later', retry);
    case 'internal':
      return new HttpError(500, 'Prediction failed unexpectedly');
  }
}

/**
 * The most of a body refused with 413 that is read and dropped so the client sees the answer; past
 * it the connection is reset. Time is bounded too, by REQUEST_TIMEOUT_MS.
 */
export const DRAIN_MAX_BYTES = 256 * 1024 * 1024;

/** Sockets reading and dropping the rest of a body already answered with 413 (registerErrorHandling). */
const draining = new WeakSet<object>();

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (bad framing, headers too large,
 * headers or body too slow): the same `{detail}` body as every other error, then the connection
 * closes. Fastify's default would answer `{error, message, statusCode}`.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A socket still reading the rest of a body refused with 413 has had its answer: a timeout or bad
  // framing there closes it, with no second response.
  if (!socket.writable || err.code === 'ECONNRESET' || draining.has(socket)) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify({ detail: GENERIC_DETAIL[status] ?? 'Bad request' });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * Fastify's `frameworkErrors`: what its router refuses before any route or hook runs (a malformed
 * percent-encoding, a path parameter over `maxParamLength`). Its own answer quotes the path; this one
 * echoes nothing of the URL, and comes before authentication, so it says nothing about any route.
 */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const answer =
    error.code === 'FST_ERR_BAD_URL'
      ? new HttpError(400, 'Malformed URL: invalid percent-encoding')
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new HttpError(414, GENERIC_DETAIL[414] ?? 'URI too long')
        : toHttpError(error, 0);
  void reply.code(answer.statusCode).headers(answer.headers).send({ detail: answer.detail });
}

/** The answer for any error: status, detail and headers, decided without reading its message. */
export function toHttpError(error: unknown, bodyLimit: number): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof ScoringError) return scoringAnswer(error);
  // Written nowhere (the connection is gone); 499 is what access logs and metrics then show, as nginx does.
  if (error instanceof ConnectionClosedError) return new HttpError(499, 'Client closed the connection');
  if (error instanceof JobsUnavailableError) {
    return new HttpError(503, 'Batch jobs are unavailable: the shared job store cannot be reached; retry shortly', {
      'retry-after': String(RETRY_AFTER_BUSY_S),
    });
  }
  const fe = error as Partial<FastifyError> & { detail?: unknown };
  if (Array.isArray(fe.validation)) {
    const place: ValidationPlace = fe.validationContext === 'querystring' ? 'query' : 'body';
    return new HttpError(422, validationDetail(fe.validation as AjvLikeError[], place));
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new HttpError(422, 'body: malformed JSON');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HttpError(422, 'body: must be a JSON object, got an empty body');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpError(413, `Request body exceeds the limit of ${bodyLimit} bytes`);
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status === 429 && typeof fe.detail === 'string') return new HttpError(429, fe.detail);
  if (status >= 400 && status < 500) return new HttpError(status, GENERIC_DETAIL[status] ?? 'Bad request');
  return new HttpError(500, 'Internal server error');
}

export function registerErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler(async (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    // A route may set a smaller limit than the server's (routes/predict.ts).
    const answer = toHttpError(error, request.routeOptions.bodyLimit ?? bodyLimit);
    if (answer.statusCode === 500) {
      request.log.error({ bug: describeBug(error) }, 'request failed');
    } else if (error instanceof ScoringError) {
      request.log.warn({ scoring_error: error.kind }, 'scoring unavailable');
    }
    if ((error as Partial<FastifyError>).code === 'FST_ERR_CTP_BODY_TOO_LARGE' || answer.drainBody) {
      // Fastify closes the connection after a body error, but the client is still sending the body it
      // was refused: closed under it, the socket resets and most clients report EPIPE instead of this
      // 413. Kept open, the rest of the body is read and dropped (no longer than REQUEST_TIMEOUT_MS
      // allows), as Node does for any unread body, and the answer arrives.
      reply.removeHeader('connection');
      const socket = request.raw.socket;
      draining.add(socket);
      // A client that sent `Connection: close` (Python's urllib always does) would have the socket
      // closed as soon as the 413 is written, with its unread body in the kernel's buffer: a reset,
      // and the client reports EPIPE, never the 413. Kept open until the body is read, as servers'
      // lingering close does, then closed: within REQUEST_TIMEOUT_MS and DRAIN_MAX_BYTES.
      const closeAfter = !reply.raw.shouldKeepAlive;
      if (closeAfter) reply.raw.shouldKeepAlive = true;
      let drained = 0;
      request.raw.on('data', (chunk: Buffer) => {
        drained += chunk.length;
        if (drained > DRAIN_MAX_BYTES) socket.destroy();
      });
      request.raw.once('end', () => {
        draining.delete(socket);
        if (!closeAfter) return;
        // The client asked to close: once the 413 is out and its body read, close as it asked.
        if (reply.raw.writableFinished) socket.end();
        else reply.raw.once('finish', () => socket.end());
      });
      request.raw.resume();
    }
    return reply.code(answer.statusCode).headers(answer.headers).send({ detail: answer.detail });
  });
  app.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ detail: 'Not found' }));
}
