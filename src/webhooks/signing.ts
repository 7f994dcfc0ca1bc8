// Standard Webhooks signing (https://www.standardwebhooks.com), symmetric "v1" scheme.
import { createHmac } from 'node:crypto';

/** `v1,` + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)), the value of `webhook-signature`. */
export function signWebhook(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/**
 * A job's webhook message id: a job sends one message, so its id is the job's. The same on every
 * retry, on a replica that takes the delivery over, and on a delivery queued again, so receivers can
 * deduplicate on it (Standard Webhooks: "the same when the same webhook is being resent").
 */
export function webhookMessageId(jobId: string): string {
  return `msg_${jobId}`;
}
