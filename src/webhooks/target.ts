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

/**
 * Parses WEBHOOK_ALLOWED_HOSTS (comma-separated `host:port`, the port always written: an SSRF
 * allow-list says exactly what it allows).
 * Parsing through WHATWG URL normalises case, IDN and IPv6 exactly as the webhook URL is normalised,
 * so an entry and a URL naming the same origin compare equal as strings.
 */
export function parseAllowedHosts(list: string | readonly string[] | undefined): Set<string> {
  const entries = typeof list === 'string' ? list.split(',') : (list ?? []);
  const out = new Set<string>();
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    if (!/:\d{1,5}$/.test(entry)) throw new Error(`WEBHOOK_ALLOWED_HOSTS entries must be host:port (bad entry "${entry}")`);
    let parsed: URL;
    try {
      parsed = new URL(`https://${entry}`);
    } catch {
      throw new Error(`WEBHOOK_ALLOWED_HOSTS entry "${entry}" is not a host or host:port`);
    }
    if (parsed.username !== '' || parsed.password !== '' || parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '') {
      throw new Error(`WEBHOOK_ALLOWED_HOSTS entry "${entry}" must be only host or host:port`);
    }
    out.add(`${parsed.hostname}:${parsed.port === '' ? '443' : parsed.port}`);
  }
  return out;
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
