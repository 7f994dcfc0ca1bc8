// The webhook settings parsed from the configuration: WEBHOOK_SECRET (a Standard Webhooks secret,
// https://www.standardwebhooks.com) into the signing key for signing.ts, and WEBHOOK_ALLOWED_HOSTS into
// the allow-list for target.ts. A leaf that src/config.ts imports: reading the configuration loads
// nothing else of webhooks or jobs.

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
