// SSRF guard for webhook_url: only host:port pairs the operator allow-listed, checked at submit time.
import type { CodedError } from '../error-catalogue.ts';

export interface WebhookTargetPolicy {
  /** `host:port` entries (lower-cased host; IPv6 in brackets). */
  allowedHosts: ReadonlySet<string>;
  allowHttp: boolean;
}

export type WebhookTargetCheck = { ok: true; url: URL } | { ok: false; error: CodedError };

function defaultPort(protocol: string): string {
  return protocol === 'http:' ? '80' : '443';
}

/** Accepts a webhook_url only when every rule holds; the error's code names the rule that failed. */
export function checkWebhookTarget(raw: string, policy: WebhookTargetPolicy): WebhookTargetCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, error: { code: 'webhook_url_not_absolute' } };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, error: { code: 'webhook_url_not_https' } };
  }
  if (url.protocol === 'http:' && !policy.allowHttp) {
    return { ok: false, error: { code: 'webhook_url_http_disabled' } };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, error: { code: 'webhook_url_credentials' } };
  }
  const hostPort = `${url.hostname}:${url.port === '' ? defaultPort(url.protocol) : url.port}`;
  if (!policy.allowedHosts.has(hostPort)) {
    return { ok: false, error: { code: 'webhook_host_not_allowed', params: { host: hostPort } } };
  }
  url.hash = '';
  return { ok: true, url };
}
