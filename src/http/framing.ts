// Message framing the appliance accepts, checked first on every request, before authentication and
// before any byte of a body is read. Node's parser is lenient where RFC 9112 lets a server be: it takes
// `Transfer-Encoding: gzip, chunked` as chunked, a Transfer-Encoding on HTTP/1.0, and a compressed body
// it never decodes. A proxy in front may read such a message another way (the root of request
// smuggling), so anything the appliance does not decode itself is refused and the connection closed.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';

/** Close after answering: once framing is in doubt, nothing later on the connection can be trusted. */
const CLOSE = { headers: { connection: 'close' } };

/** The refusal for a request's framing, or undefined when the appliance reads it as the client meant. */
export function framingError(request: Pick<FastifyRequest, 'headers' | 'raw'>): HttpError | undefined {
  const { headers } = request;
  const version = request.raw.httpVersion;
  const te = headers['transfer-encoding'];
  if (te !== undefined) {
    if (version === '1.0') return new HttpError({ code: 'transfer_encoding_http10' }, CLOSE);
    // Only plain chunked framing: any other coding would have to be decoded first, and is not.
    if (te.trim().toLowerCase() !== 'chunked') return new HttpError({ code: 'transfer_encoding_not_chunked' }, CLOSE);
  }
  const ce = headers['content-encoding'];
  if (ce !== undefined && ce.trim().toLowerCase() !== 'identity') {
    return new HttpError({ code: 'content_encoding_unsupported' }, CLOSE);
  }
  // HTTP/1.1 requires Host (RFC 9112 section 3.2); Node's own refusal is an empty 400 (app.ts turns it off).
  if (version !== '1.0' && (headers.host === undefined || headers.host === '')) return new HttpError({ code: 'host_required' }, CLOSE);
  return undefined;
}

/** Registers the check as the first onRequest hook, so a refused request never reaches auth or a route. */
export function registerFramingCheck(app: FastifyInstance): void {
  // Callback style, not async: it runs on every request, and an async hook costs a promise each time.
  app.addHook('onRequest', (request, _reply, done) => done(framingError(request)));
}
