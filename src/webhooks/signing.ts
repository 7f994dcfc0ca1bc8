// Standard Webhooks signing (https://www.standardwebhooks.com), symmetric "v1" scheme.
import { createHmac, randomUUID } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
// Standard base64 only: the spec's secrets are base64 (not base64url) and Buffer.from would
// silently skip invalid characters, so validate the alphabet before decoding.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The spec recommends secrets of 24 to 64 bytes; fewer than 16 bytes is too weak to accept. */
const MIN_SECRET_BYTES = 16;

/** Decodes `whsec_<base64>` to the HMAC key bytes; throws a message naming the problem. */
export function parseWebhookSecret(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error(`WEBHOOK_SECRET must start with "${SECRET_PREFIX}"`);
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded)) throw new Error(`WEBHOOK_SECRET must be "${SECRET_PREFIX}" followed by standard base64`);
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_SECRET_BYTES) {
    throw new Error(`WEBHOOK_SECRET must decode to at least ${MIN_SECRET_BYTES} bytes (24 to 64 recommended)`);
  }
  return key;
}

/** `v1,` + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)), the value of `webhook-signature`. */
export function signWebhook(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** A message id, unique per message and kept across its retries so receivers can deduplicate. */
export function newMessageId(): string {
  return `msg_${randomUUID()}`;
}
