// Conversation text never sits in Redis in plaintext: each queued item is sealed with AES-256-GCM
// under REDIS_ENCRYPTION_KEY_FILE's key, bound to its job and position (the additional data), so a
// sealed item cannot be read, altered, or moved to another job without the key. A job's webhook URL
// (whose query may carry the receiver's token) is sealed the same way in its job record.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ScoreRequest } from '../../scoring/types.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

/**
 * Reads the key file: 32 bytes given as base64 (44 characters, `openssl rand -base64 32`) or hex (64
 * characters), surrounding whitespace ignored. Throws a message naming the variable and the fix.
 */
export function loadSealingKey(path: string): Buffer {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new Error(`REDIS_ENCRYPTION_KEY_FILE: cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  const key = /^[0-9a-fA-F]{64}$/.test(text)
    ? Buffer.from(text, 'hex')
    : /^[A-Za-z0-9+/]{43}=$/.test(text)
      ? Buffer.from(text, 'base64')
      : undefined;
  if (key?.length !== KEY_BYTES) {
    throw new Error('REDIS_ENCRYPTION_KEY_FILE must hold 32 random bytes as base64 or hex (create one with: openssl rand -base64 32)');
  }
  return key;
}

export class Sealer {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new RangeError('AES-256-GCM needs a 32-byte key');
    this.#key = key;
  }

  /** base64(iv | tag | ciphertext) of the request as JSON; `context` must be given again to open it. */
  seal(request: ScoreRequest, context: string): string {
    return this.sealText(JSON.stringify(request), context);
  }

  /** Throws when the data was altered, sealed under another key, or for another context. */
  open(sealed: string, context: string): ScoreRequest {
    return JSON.parse(this.openText(sealed, context)) as ScoreRequest;
  }

  /** base64(iv | tag | ciphertext) of the text: never contains ':', so it cannot be read as a URL. */
  sealText(text: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /** Throws when the data was altered, sealed under another key, or for another context. */
  openText(sealed: string, context: string): string {
    const raw = Buffer.from(sealed, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('sealed item too short');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}
