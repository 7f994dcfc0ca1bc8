// Bearer-key authentication for the protected context. Keys are kept only as SHA-256 digests and a
// presented key is compared, in constant time, against every one of them.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';


export interface ApiKey {
  /** Non-secret identifier (a prefix of the digest's digest): rate-limit bucket and job owner. */
  id: string;
  digest: Buffer;
}

export interface ApiKeySet {
  keys: ApiKey[];
  /** Set when no key was configured and one was generated for this process. */
  generated: string | undefined;
  /** How many plaintext keys are shorter than MIN_KEY_CHARS: accepted, with a warning at start. */
  short: number;
}

/** Shorter plaintext keys are accepted with a warning (the chart refuses them); SECURITY.md asks for 32. */
export const MIN_KEY_CHARS = 16;

declare module 'fastify' {
  interface FastifyRequest {
    /** Id of the API key that authenticated this request; set by the protected context. */
    apiKeyId: string | undefined;
  }
}

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest();

function keyFromDigest(digest: Buffer): ApiKey {
  // Hashing the digest again keeps the id from being a usable prefix of anything an attacker could grind.
  return { id: `key_${createHash('sha256').update(digest).digest('hex').slice(0, 16)}`, digest };
}

/** Parses key entries: plaintext, or `sha256:<64 hex>` for a key stored only as its hash. */
export function parseKeyEntries(entries: string[]): ApiKey[] {
  const keys: ApiKey[] = [];
  entries.forEach((raw, i) => {
    const entry = raw.trim();
    if (entry === '') return;
    if (entry.toLowerCase().startsWith('sha256:')) {
      const hex = entry.slice('sha256:'.length);
      if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
        // The index, never the entry: it may be a key pasted in the wrong format.
        throw new Error(`API key entry ${i + 1} starts with sha256: but is not 64 hex digits`);
      }
      keys.push(keyFromDigest(Buffer.from(hex, 'hex')));
    } else {
      // What a Bearer header can carry: a key with a space or a non-ASCII letter could never be presented.
      if (!/^[\x21-\x7e]+$/.test(entry)) {
        throw new Error(`API key entry ${i + 1} holds a space or a character outside printable ASCII: no Bearer header can carry it`);
      }
      keys.push(keyFromDigest(sha256(entry)));
    }
  });
  return keys;
}

/** Plaintext entries shorter than MIN_KEY_CHARS. */
function countShort(entries: string[]): number {
  return entries.map((e) => e.trim()).filter((e) => e !== '' && !e.toLowerCase().startsWith('sha256:') && e.length < MIN_KEY_CHARS).length;
}

/** Reads API_KEYS (comma list) or API_KEYS_FILE (one per line, `#` comments); generates one if neither. */
export function loadApiKeys(config: { API_KEYS: string | undefined; API_KEYS_FILE: string | undefined }): ApiKeySet {
  let entries: string[] = [];
  const configured = config.API_KEYS_FILE !== undefined || (config.API_KEYS !== undefined && config.API_KEYS !== '');
  if (config.API_KEYS_FILE !== undefined) {
    entries = readFileSync(config.API_KEYS_FILE, 'utf8')
      .split(/\r?\n/)
      .filter((line) => !line.trimStart().startsWith('#'));
  } else if (config.API_KEYS !== undefined) {
    entries = config.API_KEYS.split(',');
  }
  const keys = parseKeyEntries(entries);
  if (keys.length > 0) return { keys, generated: undefined, short: countShort(entries) };
  // A source given but empty (a secret mounted wrong) is a mistake, not a request for a fresh key.
  if (configured) throw new Error('holds no key: every entry is blank or a comment');
  const generated = randomBytes(32).toString('base64url');
  return { keys: parseKeyEntries([generated]), generated, short: 0 };
}

/** The key's id when it matches a configured key, else undefined. Always checks every key. */
export function matchKey(keys: ApiKey[], presented: string): string | undefined {
  const digest = sha256(presented);
  let found: string | undefined;
  for (const key of keys) {
    // No early exit: the time taken does not say which key, or whether any, matched.
    if (timingSafeEqual(digest, key.digest) && found === undefined) found = key.id;
  }
  return found;
}

/** onRequest hook: runs before the body is read, so 401/403 win over any 422. */
export function bearerAuth(keys: ApiKey[]) {
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
    const token = match?.[1];
    if (token === undefined) {
      reply.header('www-authenticate', 'Bearer');
      throw new HttpError({ code: 'missing_api_key' });
    }
    const id = matchKey(keys, token);
    if (id === undefined) throw new HttpError({ code: 'invalid_api_key' });
    request.apiKeyId = id;
  };
}
