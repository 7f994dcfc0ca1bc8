// Standard Webhooks signing (https://www.standardwebhooks.com), symmetric "v1" scheme.
import { createHmac, randomUUID } from 'node:crypto';

/** `v1,` + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)), the value of `webhook-signature`. */
export function signWebhook(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** A message id, unique per message and kept across its retries so receivers can deduplicate. */
export function newMessageId(): string {
  return `msg_${randomUUID()}`;
}
