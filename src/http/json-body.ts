// The JSON body parser: nesting is bounded before JSON.parse runs. A valid request nests at most a
// few levels, but 33 MB of `[` made JSON.parse build millions of arrays (2.8 s of blocked event loop,
// 1.5 GB of memory) before failing; a linear scan refuses it in milliseconds.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';

/** Deepest nesting any request body needs (v2 batch: body, conversations, item, messages, message). */
export const MAX_JSON_DEPTH = 16;

/**
 * Whether array/object nesting in the UTF-8 bytes passes `limit`, stopping there; strings are skipped.
 * Bytes, not a string: every byte that matters is ASCII, and no 33 MB string is built to refuse a bomb.
 * A string's content is skipped with indexOf (native, memchr-fast) from quote to quote rather than
 * byte by byte: chat bodies are almost all string, and the byte loop took 190 ms of event loop for a
 * 32 MB batch.
 */
export function jsonDepthExceeds(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (c === 34) {
      // Find the closing quote: the next quote preceded by an even run of backslashes.
      for (;;) {
        const q = bytes.indexOf(34, i + 1);
        if (q === -1) return false; // unterminated: JSON.parse refuses it
        let slashes = 0;
        for (let b = q - 1; b > i && bytes[b] === 92; b--) slashes++;
        i = q;
        if (slashes % 2 === 0) break;
      }
    } else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

function isWellFormedJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function registerJsonBodyParser(app: FastifyInstance): void {
  // Fastify's own parser after the check: it keeps its prototype-poisoning protection.
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request: FastifyRequest, body: string | Buffer, done) => {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    if (jsonDepthExceeds(bytes, MAX_JSON_DEPTH)) {
      done(new HttpError({ code: 'body_too_deep', params: { depth: MAX_JSON_DEPTH } }), undefined);
      return;
    }
    const text = bytes.toString('utf8');
    parse(request, text, (err: Error | null, value?: unknown) => {
      // Fastify's parser answers prototype poisoning and broken JSON alike; well-formed JSON that it
      // refused holds a "__proto__" key or a "constructor" with a "prototype", and the client is told so.
      if (err !== null && err !== undefined && (err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY' && isWellFormedJson(text)) {
        done(new HttpError({ code: 'forbidden_key' }), undefined);
        return;
      }
      done(err, value);
    });
  });
}
