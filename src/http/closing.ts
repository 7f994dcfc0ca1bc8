// Requests that reach the service once shutdown has begun: on a keep-alive connection that was busy
// when it started, or pipelined behind a request still in flight. Fastify's own answer to them
// (`return503OnClosing`) is a bare `{error, message, statusCode}` 503 without `code`, `Retry-After`
// or the security headers; this answers the catalogue's 503 instead and closes the connection, so the
// client's next try reaches another replica (or this one, restarted).
import type { FastifyInstance } from 'fastify';
import { HttpError } from './errors.ts';
import { discardBody } from './lingering-close.ts';

/** Turns Fastify's own refusal off; pass with the app's options, beside registerClosingRefusal. */
export const closingOptions = { return503OnClosing: false } as const;

/**
 * Refuses every request that arrives after close() began. Register it on the root instance before
 * the routes: preClose hooks run one after another in that order, and this one must run first, in the
 * same turn as Fastify marks itself closing, so that no request is routed once closing has begun.
 */
export function registerClosingRefusal(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // Callback style, as the framing check: it runs on every request.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!closing) return done();
    const refusal = new HttpError({ code: 'service_closing' }, { headers: { connection: 'close' } });
    // The body is read and dropped before the answer: a connection closed under an unread body is
    // reset, and the client sees EPIPE rather than the 503. Node's request timeout bounds the wait.
    if (request.raw.readableEnded) return done(refusal);
    discardBody(request.raw, () => done(refusal));
  });
}
