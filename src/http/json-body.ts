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
 */
export function jsonDepthExceeds(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i] as number;
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
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
      done(new HttpError(422, `body: nested deeper than ${MAX_JSON_DEPTH} levels; no valid request does`), undefined);
      return;
    }
    const text = bytes.toString('utf8');
    parse(request, text, (err: Error | null, value?: unknown) => {
      // Fastify's parser answers prototype poisoning and broken JSON alike; well-formed JSON that it
      // refused holds a "__proto__" key or a "constructor" with a "prototype", and the client is told so.
      if (err !== null && err !== undefined && (err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY' && isWellFormedJson(text)) {
        done(new HttpError(422, 'body: a "__proto__" key, or a "constructor" key holding "prototype", is not allowed'), undefined);
        return;
      }
      done(err, value);
    });
  });
}
