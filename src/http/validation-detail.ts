// The text of a schema error (Ajv's, through Fastify's validation): one readable sentence naming the
// field and the rule broken, never quoting the value. Sent as the `invalid_field` error's detail.

export interface AjvLikeError {
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
