// Turns every failure into an answer, in one place: the typed errors of the engine, the jobs and the
// framework become a code of the catalogue (../error-catalogue.ts), whose status, text and Retry-After
// make the `{detail, code}` body. Nothing here reads an error's message, so no stack trace, body
// fragment or key can reach a client or a log through it.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorRetryAfterS, errorStatus, errorText, type BareCode, type CodedError, type ErrorCode } from '../error-catalogue.ts';
import { JobsUnavailableError } from '../jobs/types.ts';
import { describeBug } from '../ops/describe-bug.ts';
import { ScoringError, type ScoringErrorKind } from '../scoring/types.ts';
import { ConnectionClosedError } from './connection.ts';
import { drainRefusedBody, isDraining } from './lingering-close.ts';
import { trackRouteMethods } from './method-not-allowed.ts';
import { validationDetail, type AjvLikeError, type ValidationPlace } from './validation-detail.ts';

/** An answer of the catalogue, ready for the client: its status, `{detail, code}` and headers. */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly detail: string;
  readonly headers: Record<string, string>;
  /** Refused before its body was read: read and drop the rest so the client sees this answer. */
  readonly drainBody: boolean;
  constructor(error: CodedError, options: { headers?: Record<string, string>; drainBody?: boolean } = {}) {
    const detail = errorText(error);
    super(detail);
    this.name = 'HttpError';
    this.code = error.code;
    this.statusCode = errorStatus(error.code);
    this.detail = detail;
    const retryAfter = errorRetryAfterS(error.code);
    this.headers = { ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }), ...options.headers };
    this.drainBody = options.drainBody ?? false;
  }

  /** The body every error answer carries. */
  get body(): ErrorBody {
    return { detail: this.detail, code: this.code };
  }
}

export interface ErrorBody {
  detail: string;
  code: ErrorCode;
}

/** The body of a catalogue error, for answers written outside Fastify (raw sockets, the redirect port). */
export function errorBody(error: CodedError): string {
  return JSON.stringify({ detail: errorText(error), code: error.code } satisfies ErrorBody);
}

export const errorBodySchema = {
  $id: 'ErrorBody',
  type: 'object',
  description: 'Every error answer: a human-readable reason, never echoing the request body, and its stable code.',
  properties: {
    detail: { type: 'string' },
    code: { type: 'string', description: 'Stable and machine-readable (README, "Error codes"); the detail may be reworded, the code is not.' },
  },
  required: ['detail', 'code'],
  additionalProperties: false,
} as const;

/** Every route's error responses: `{detail, code}` for any 4xx and 5xx. */
export const errorResponses = { '4xx': errorBodySchema, '5xx': errorBodySchema } as const;

/** The catalogue's answer for a bare status (Node's parser, Fastify's own 4xx). */
const BY_STATUS: Readonly<Record<number, BareCode>> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  411: 'length_required',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
};

const SCORING: Readonly<Record<ScoringErrorKind, BareCode>> = {
  model_unavailable: 'model_unavailable',
  overloaded: 'scoring_queue_full',
  timeout: 'scoring_timeout',
  interrupted: 'scoring_interrupted',
  internal: 'prediction_failed',
};

/** Errors Node's HTTP parser raises before Fastify sees a request: the same body, then the connection closes. */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A socket still reading the rest of a body refused with 413 has had its answer: a timeout or bad
  // framing there closes it, with no second response.
  if (!socket.writable || err.code === 'ECONNRESET' || isDraining(socket)) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = errorBody({ code: BY_STATUS[status] ?? 'bad_request' });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * Node's `checkExpectation`: an Expect header other than 100-continue. Unhandled, Node answers a bare
 * 417 with no body; this is the catalogue's. The connection stays open, as Node keeps it: Node reads
 * and drops a body still arriving, where closing under it would reset the socket before the answer.
 */
export function expectationHandler(_request: IncomingMessage, response: ServerResponse): void {
  const body = errorBody({ code: 'expectation_failed' });
  response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

/**
 * Fastify's `frameworkErrors`: what its router refuses before any route or hook runs (a malformed
 * percent-encoding, a path parameter over `maxParamLength`). Its own answer quotes the path; this one
 * echoes nothing of the URL, and comes before authentication, so it says nothing about any route.
 */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const answer =
    error.code === 'FST_ERR_BAD_URL'
      ? new HttpError({ code: 'malformed_url' })
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new HttpError({ code: 'uri_too_long' })
        : toHttpError(error, 0);
  void reply.code(answer.statusCode).headers(answer.headers).send(answer.body);
}

/** The answer for any error, decided from its type and code, never from its message. */
export function toHttpError(error: unknown, bodyLimit: number): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof ScoringError) return new HttpError({ code: SCORING[error.kind] });
  if (error instanceof ConnectionClosedError) return new HttpError({ code: 'client_closed' });
  if (error instanceof JobsUnavailableError) return new HttpError({ code: 'jobs_unavailable' });
  const fe = error as Partial<FastifyError>;
  if (Array.isArray(fe.validation)) {
    const place: ValidationPlace = fe.validationContext === 'querystring' ? 'query' : 'body';
    return new HttpError({ code: 'invalid_field', params: { text: validationDetail(fe.validation as AjvLikeError[], place) } });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new HttpError({ code: 'malformed_json' });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HttpError({ code: 'empty_body' });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpError({ code: 'body_too_large', params: { limit: bodyLimit } });
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) return new HttpError({ code: BY_STATUS[status] ?? 'bad_request' });
  return new HttpError({ code: 'internal_error' });
}

/** Installs the error and not-found handlers; call it before any route is registered (405 needs them all). */
export function registerErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  const methodsOf = trackRouteMethods(app);
  app.setErrorHandler(async (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    // A route may set a smaller limit than the server's (routes/predict.ts).
    const answer = toHttpError(error, request.routeOptions.bodyLimit ?? bodyLimit);
    if (answer.statusCode === 500) {
      request.log.error({ bug: describeBug(error) }, 'request failed');
    } else if (error instanceof ScoringError) {
      request.log.warn({ scoring_error: error.kind }, 'scoring unavailable');
    }
    if ((error as Partial<FastifyError>).code === 'FST_ERR_CTP_BODY_TOO_LARGE' || answer.drainBody) drainRefusedBody(request, reply);
    return reply.code(answer.statusCode).headers(answer.headers).send(answer.body);
  });
  const unmatched = (url: string): HttpError => {
    const allowed = methodsOf(url);
    if (allowed.length === 0) return new HttpError({ code: 'not_found' });
    return new HttpError({ code: 'method_not_allowed' }, { headers: { allow: allowed.join(', ') } });
  };
  // Fastify parses a body before its not-found handler runs, under the server's whole body limit, with
  // no key asked and outside the body budget: an unknown path or method is answered before its body is
  // read, as an unauthenticated request is (Node drops the unread body). Callback style, as framing.ts's:
  // it runs on every request.
  app.addHook('onRequest', (request, _reply, done) => done(request.is404 ? unmatched(request.url) : undefined));
  app.setNotFoundHandler(async (request) => {
    throw unmatched(request.url);
  });
}
