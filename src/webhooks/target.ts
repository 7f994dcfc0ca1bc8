// SSRF guard for webhook_url: only host:port pairs the operator allow-listed, checked at submit time.

export interface WebhookTargetPolicy {
  /** `host:port` entries (lower-cased host; IPv6 in brackets). */
  allowedHosts: ReadonlySet<string>;
  allowHttp: boolean;
}

export type WebhookTargetCheck = { ok: true; url: URL } | { ok: false; detail: string };

function defaultPort(protocol: string): string {
  return protocol === 'http:' ? '80' : '443';
}

/** Accepts a webhook_url only when every rule holds; the detail names the rule that failed. */
export function checkWebhookTarget(raw: string, policy: WebhookTargetPolicy): WebhookTargetCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, detail: 'webhook_url must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, detail: 'webhook_url must use https' };
  }
  if (url.protocol === 'http:' && !policy.allowHttp) {
    return { ok: false, detail: 'webhook_url must use https (plain http is disabled: WEBHOOK_ALLOW_HTTP=false)' };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, detail: 'webhook_url must not carry credentials' };
  }
  const hostPort = `${url.hostname}:${url.port === '' ? defaultPort(url.protocol) : url.port}`;
  if (!policy.allowedHosts.has(hostPort)) {
    // The detail does not list the allow-list: it is the operator's network layout, not the caller's.
    return { ok: false, detail: `webhook_url host ${hostPort} is not in WEBHOOK_ALLOWED_HOSTS` };
  }
  url.hash = '';
  return { ok: true, url };
}
