// The rules a submission must pass before it takes any capacity: service state, item count, webhook
// target, job size. The capacity limits (per key, all jobs together) are counted atomically by the
// store, since with Redis several replicas admit at once.
import type { CodedError } from '../error-catalogue.ts';
import type { JobsConfig, SubmitInput } from './types.ts';
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
  | { ok: false; error: CodedError };

export function checkSubmission(input: SubmitInput, ctx: AdmissionContext): AdmissionCheck {
  const reject = (error: CodedError): AdmissionCheck => ({ ok: false, error });
  if (!ctx.accepting) return reject({ code: 'shutting_down' });
  if (!ctx.modelReady) return reject({ code: 'model_unavailable' });
  const c = ctx.config;
  if (input.items.length > c.JOB_MAX_ITEMS) {
    return reject({ code: 'too_many_items', params: { max: c.JOB_MAX_ITEMS } });
  }
  let webhookUrl: string | undefined;
  if (input.webhookUrl !== undefined) {
    if (!ctx.webhooksEnabled) {
      return reject({ code: 'webhooks_disabled' });
    }
    const check = checkWebhookTarget(input.webhookUrl, ctx.target);
    if (!check.ok) return reject(check.error);
    webhookUrl = check.url.href;
  }
  const chars = input.items.reduce((sum, item) => sum + item.request.conversation.length, 0);
  if (chars > c.JOB_MAX_QUEUED_CHARS) {
    return reject({ code: 'job_too_large', params: { chars, max: c.JOB_MAX_QUEUED_CHARS } });
  }
  return { ok: true, chars, webhookUrl };
}
