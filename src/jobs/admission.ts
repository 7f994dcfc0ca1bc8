// The rules a submission must pass before it takes any capacity: service state, item count, webhook
// target, job size. The capacity limits (per key, all jobs together) are counted atomically by the
// store, since with Redis several replicas admit at once.
import type { JobsConfig, RejectReason, SubmitInput } from './types.ts';
import { checkWebhookTarget, type WebhookTargetPolicy } from '../webhooks/target.ts';

export const SHUTDOWN_ERROR = 'The service shut down before the job finished; resubmit it';

export interface AdmissionContext {
  accepting: boolean;
  modelReady: boolean;
  config: Pick<JobsConfig, 'JOB_MAX_ITEMS' | 'JOB_MAX_QUEUED_CHARS'>;
  /** False when WEBHOOK_SECRET is not configured: a webhook could not be signed. */
  webhooksEnabled: boolean;
  target: WebhookTargetPolicy;
}

export type AdmissionCheck =
  | { ok: true; chars: number; webhookUrl: string | undefined }
  | { ok: false; reason: RejectReason; detail: string };

export function checkSubmission(input: SubmitInput, ctx: AdmissionContext): AdmissionCheck {
  const reject = (reason: RejectReason, detail: string): AdmissionCheck => ({ ok: false, reason, detail });
  if (!ctx.accepting) return reject('shutting_down', 'The service is shutting down and accepts no new jobs; resubmit shortly');
  // The HTTP layer answers this reason with its one "model not loaded" error (http/errors.ts).
  if (!ctx.modelReady) return reject('model_unavailable', 'model not loaded');
  const c = ctx.config;
  if (input.items.length > c.JOB_MAX_ITEMS) {
    return reject('too_many_items', `conversations: must hold at most ${c.JOB_MAX_ITEMS} items (JOB_MAX_ITEMS)`);
  }
  let webhookUrl: string | undefined;
  if (input.webhookUrl !== undefined) {
    if (!ctx.webhooksEnabled) {
      return reject('invalid_webhook', 'webhook_url: webhooks are disabled because WEBHOOK_SECRET is not configured (they could not be signed)');
    }
    const check = checkWebhookTarget(input.webhookUrl, ctx.target);
    if (!check.ok) return reject('invalid_webhook', check.detail);
    webhookUrl = check.url.href;
  }
  const chars = input.items.reduce((sum, item) => sum + item.request.conversation.length, 0);
  if (chars > c.JOB_MAX_QUEUED_CHARS) {
    return reject('too_large', `The job holds ${chars} characters, more than JOB_MAX_QUEUED_CHARS (${c.JOB_MAX_QUEUED_CHARS}); split it`);
  }
  return { ok: true, chars, webhookUrl };
}
