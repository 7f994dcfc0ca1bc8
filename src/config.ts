// Every setting of the appliance, read once from the environment and validated with env-schema.
// A bad value throws a ConfigError naming the variable; main.ts turns it into a non-zero exit.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { fileURLToPath } from 'node:url';
import envSchema from 'env-schema';
import type { JobsConfig } from './jobs/types.ts';
import { loadSealingKey } from './jobs/redis/sealing.ts';
import { parseAllowedHosts, parseWebhookSecret } from './webhooks/settings.ts';

/** What fastify's `trustProxy` accepts, parsed from TRUST_PROXY. */
export type TrustProxy = boolean | number | string[];

export interface Config extends JobsConfig {
  HOST: string;
  PORT: number;
  HTTP_PORT: number;
  PUBLIC_HTTPS_PORT: number | undefined;
  PUBLIC_HOST: string | undefined;
  TLS_MODE: 'on' | 'off';
  TLS_CERT_FILE: string | undefined;
  TLS_KEY_FILE: string | undefined;
  /** How often TLS_CERT_FILE and TLS_KEY_FILE are read again to pick up a renewed certificate. */
  TLS_RELOAD_INTERVAL_MS: number;
  TRUST_PROXY: TrustProxy;
  API_KEYS: string | undefined;
  API_KEYS_FILE: string | undefined;
  RATE_LIMIT_MAX: number;
  RATE_LIMIT_WINDOW_MS: number;
  METRICS_PORT: number;
  METRICS_HOST: string;
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  AUDIT_LOG: boolean;
  /** The key of AUDIT_HASH_KEY_FILE: audit lines then carry an HMAC-SHA-256 of the conversation, not its SHA-256. */
  AUDIT_HASH_KEY: Buffer | undefined;
  MODEL_DIR: string;
  MODEL_SHA256: string | undefined;
  WORKERS: number;
  INTRA_OP_THREADS: number;
  MAX_QUEUE: number;
  REQUEST_TIMEOUT_MS: number;
  /** How long an idle keep-alive connection is held; by default 5 s, never past REQUEST_TIMEOUT_MS. */
  KEEP_ALIVE_TIMEOUT_MS: number;
  SHUTDOWN_GRACE_MS: number;
  BODY_LIMIT_BYTES: number;
  /** Request-body bytes in flight across all requests (http/body-budget.ts); beyond it 503, above it 413. */
  MAX_INFLIGHT_BODY_BYTES: number;
  // Preview /v2 settings (WEBHOOK_*, JOB_*) are jobs' own JobsConfig, validated here with every other
  // variable; WEBHOOK_SIGNING_KEY is WEBHOOK_SECRET (or WEBHOOK_SECRET_FILE) decoded here, once.
  /** Normalised `host:port` entries (lower case, IDN and IPv6 as URLs normalise them); an entry without a port is refused. */
  WEBHOOK_ALLOWED_HOSTS: string[];
  // Shared state for several replicas (README "Scaling out"): unset keeps everything in this process.
  REDIS_URL: string | undefined;
  REDIS_ENCRYPTION_KEY_FILE: string | undefined;
  REDIS_KEY_PREFIX: string;
  JOB_LOCK_MS: number;
  /** Serve the review console (static page, public) at /console on the API listener (src/routes/console.ts). */
  CONSOLE_ENABLED: boolean;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The shipped model, found next to the source tree so the working directory does not matter. */
export const DEFAULT_MODEL_DIR = fileURLToPath(new URL('../models/conversation-risk', import.meta.url));

const port = (def: number) => ({ type: 'integer', minimum: 0, maximum: 65535, default: def });
const positive = (def: number, maximum?: number) => ({
  type: 'integer',
  minimum: 1,
  ...(maximum === undefined ? {} : { maximum }),
  default: def,
});

/** Node's timers hold at most 2^31 - 1 ms (24.8 days); a longer delay fires at once instead. */
export const MAX_DURATION_MS = 2_147_483_647;
/**
 * Node's own default for idle keep-alive connections. A load balancer in front that reuses connections
 * longer than this (AWS ALB: 60 s) needs a longer KEEP_ALIVE_TIMEOUT_MS, or it meets closed sockets.
 */
export const DEFAULT_KEEP_ALIVE_MS = 5000;
/** A duration in milliseconds: every one of them ends up in a timer. */
const duration = (def: number) => positive(def, MAX_DURATION_MS);

/** The JSON Schema env-schema validates against; README's configuration table mirrors it. */
export const configSchema = {
  type: 'object',
  properties: {
    HOST: { type: 'string', minLength: 1, default: '0.0.0.0' },
    PORT: port(8443),
    HTTP_PORT: port(8080),
    PUBLIC_HTTPS_PORT: { type: 'integer', minimum: 1, maximum: 65535 },
    // A host name or a bracketed IPv6 address, nothing else: it is written into redirect targets.
    PUBLIC_HOST: { type: 'string', pattern: '^(\\[[0-9a-fA-F:.]+\\]|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)$' },
    TLS_MODE: { type: 'string', enum: ['on', 'off'], default: 'on' },
    TLS_CERT_FILE: { type: 'string', minLength: 1 },
    TLS_KEY_FILE: { type: 'string', minLength: 1 },
    TLS_RELOAD_INTERVAL_MS: duration(60_000),
    TRUST_PROXY: { type: 'string', default: 'false' },
    API_KEYS: { type: 'string' },
    API_KEYS_FILE: { type: 'string', minLength: 1 },
    RATE_LIMIT_MAX: positive(60),
    RATE_LIMIT_WINDOW_MS: duration(60_000),
    METRICS_PORT: port(9464),
    METRICS_HOST: { type: 'string', minLength: 1 },
    LOG_LEVEL: {
      type: 'string',
      enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      default: 'info',
    },
    AUDIT_LOG: { type: 'boolean', default: false },
    AUDIT_HASH_KEY_FILE: { type: 'string', minLength: 1 },
    MODEL_DIR: { type: 'string', minLength: 1, default: DEFAULT_MODEL_DIR },
    MODEL_SHA256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
    WORKERS: positive(availableParallelism(), 256),
    INTRA_OP_THREADS: positive(1, 256),
    MAX_QUEUE: positive(64),
    REQUEST_TIMEOUT_MS: duration(30_000),
    // No default here: it depends on REQUEST_TIMEOUT_MS (loadConfig).
    KEEP_ALIVE_TIMEOUT_MS: { type: 'integer', minimum: 1, maximum: MAX_DURATION_MS },
    SHUTDOWN_GRACE_MS: duration(10_000),
    BODY_LIMIT_BYTES: positive(32 * 1024 * 1024),
    MAX_INFLIGHT_BODY_BYTES: positive(64 * 1024 * 1024),
    WEBHOOK_SECRET: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$' },
    WEBHOOK_SECRET_FILE: { type: 'string', minLength: 1 },
    WEBHOOK_ALLOWED_HOSTS: { type: 'string', default: '' },
    WEBHOOK_ALLOW_HTTP: { type: 'boolean', default: false },
    WEBHOOK_RETRY_BASE_MS: duration(1000),
    WEBHOOK_MAX_ATTEMPTS: positive(8),
    WEBHOOK_MAX_RETRY_MS: duration(3_600_000),
    WEBHOOK_TIMEOUT_MS: duration(10_000),
    JOB_MAX_ITEMS: positive(1000),
    JOB_MAX_QUEUED_PER_KEY: positive(10),
    JOB_MAX_QUEUED_CHARS: positive(50_000_000),
    JOB_RESULT_TTL_MS: duration(3_600_000),
    REDIS_URL: { type: 'string', pattern: '^rediss?://' },
    REDIS_URL_FILE: { type: 'string', minLength: 1 },
    REDIS_ENCRYPTION_KEY_FILE: { type: 'string', minLength: 1 },
    REDIS_KEY_PREFIX: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$', default: 'conversation-risk' },
    JOB_LOCK_MS: duration(30_000),
    CONSOLE_ENABLED: { type: 'boolean', default: true },
  },
} as const;

type Raw = Omit<Config, 'TRUST_PROXY' | 'WEBHOOK_ALLOWED_HOSTS' | 'METRICS_HOST' | 'WEBHOOK_SIGNING_KEY' | 'KEEP_ALIVE_TIMEOUT_MS' | 'AUDIT_HASH_KEY'> & {
  AUDIT_HASH_KEY_FILE: string | undefined;
  KEEP_ALIVE_TIMEOUT_MS: number | undefined;
  WEBHOOK_SECRET: string | undefined;
  WEBHOOK_SECRET_FILE: string | undefined;
  REDIS_URL_FILE: string | undefined;
  TRUST_PROXY: string;
  WEBHOOK_ALLOWED_HOSTS: string;
  METRICS_HOST: string | undefined;
};

/** Loads and validates the configuration; throws ConfigError naming the offending variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Only our own variables go to the validator: the rest of the environment is none of its business,
  // and an empty string means "unset" so that `FOO=` in a compose file falls back to the default.
  const data: Record<string, string> = {};
  for (const name of Object.keys(configSchema.properties)) {
    const value = env[name];
    if (value !== undefined && value !== '') data[name] = value;
  }
  let raw: Raw;
  try {
    raw = envSchema<Raw>({ schema: configSchema, data, dotenv: false, env: false });
  } catch (err) {
    throw new ConfigError(`invalid configuration: ${schemaMessage(err)}`);
  }
  for (const name of ['HOST', 'METRICS_HOST'] as const) {
    const host = raw[name];
    // Checked here, not at listen time, where `getaddrinfo ENOTFOUND` would name no variable.
    if (host !== undefined && host !== 'localhost' && isIP(host) === 0) {
      throw new ConfigError(`invalid configuration: ${name} must be an IP address to listen on (0.0.0.0, ::, 127.0.0.1) or localhost, got ${JSON.stringify(host)}`);
    }
  }
  if ((raw.TLS_CERT_FILE === undefined) !== (raw.TLS_KEY_FILE === undefined)) {
    throw new ConfigError('invalid configuration: TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  if (raw.API_KEYS !== undefined && raw.API_KEYS_FILE !== undefined) {
    throw new ConfigError('invalid configuration: set API_KEYS or API_KEYS_FILE, not both');
  }
  // A first retry delay longer than the whole retry budget cannot be honoured: every wait would be cut
  // to the budget (webhooks/backoff.ts), so the setting would silently mean something else.
  if (raw.WEBHOOK_RETRY_BASE_MS > raw.WEBHOOK_MAX_RETRY_MS) {
    throw new ConfigError(
      `invalid configuration: WEBHOOK_RETRY_BASE_MS (${raw.WEBHOOK_RETRY_BASE_MS}) must not exceed WEBHOOK_MAX_RETRY_MS (${raw.WEBHOOK_MAX_RETRY_MS}), the time budget of all of a delivery's retries`,
    );
  }
  const webhookSecret = readWebhookSecret(raw);
  const redisUrl = readRedisUrl(raw);
  if (redisUrl !== undefined) {
    if (raw.REDIS_ENCRYPTION_KEY_FILE === undefined) {
      throw new ConfigError('invalid configuration: REDIS_URL needs REDIS_ENCRYPTION_KEY_FILE (conversation text is never stored in Redis unencrypted)');
    }
    try {
      loadSealingKey(raw.REDIS_ENCRYPTION_KEY_FILE);
    } catch (err) {
      throw new ConfigError(`invalid configuration: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const auditHashKey = readAuditHashKey(raw.AUDIT_HASH_KEY_FILE);
  const { REDIS_URL_FILE: _redisUrlFile, WEBHOOK_SECRET: _secret, WEBHOOK_SECRET_FILE: _secretFile, AUDIT_HASH_KEY_FILE: _auditKeyFile, ...settings } = raw;
  return {
    ...settings,
    REDIS_URL: redisUrl,
    REDIS_ENCRYPTION_KEY_FILE: raw.REDIS_ENCRYPTION_KEY_FILE,
    // Optional settings are always present, undefined when unset, so Config reads the same everywhere.
    TLS_CERT_FILE: raw.TLS_CERT_FILE,
    TLS_KEY_FILE: raw.TLS_KEY_FILE,
    API_KEYS: raw.API_KEYS,
    API_KEYS_FILE: raw.API_KEYS_FILE,
    MODEL_SHA256: raw.MODEL_SHA256?.toLowerCase(),
    PUBLIC_HTTPS_PORT: raw.PUBLIC_HTTPS_PORT,
    PUBLIC_HOST: raw.PUBLIC_HOST,
    WEBHOOK_SIGNING_KEY: webhookSecret,
    AUDIT_HASH_KEY: auditHashKey,
    METRICS_HOST: raw.METRICS_HOST ?? raw.HOST,
    KEEP_ALIVE_TIMEOUT_MS: raw.KEEP_ALIVE_TIMEOUT_MS ?? Math.min(DEFAULT_KEEP_ALIVE_MS, raw.REQUEST_TIMEOUT_MS),
    TRUST_PROXY: parseTrustProxy(raw.TRUST_PROXY),
    WEBHOOK_ALLOWED_HOSTS: readAllowedHosts(raw.WEBHOOK_ALLOWED_HOSTS),
  };
}

interface SchemaError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: { allowedValues?: unknown[] };
}

/** Ajv's errors the operator's way: `NAME must ...`, listing the allowed values of an enum. */
function schemaMessage(err: unknown): string {
  const errors = (err as { errors?: SchemaError[] }).errors;
  if (!Array.isArray(errors) || errors.length === 0) return (err instanceof Error ? err.message : String(err)).replaceAll('env/', '');
  return errors
    .map((e) => {
      const name = (e.instancePath ?? '').replace(/^\//, '');
      const allowed = e.keyword === 'enum' && Array.isArray(e.params?.allowedValues) ? `: ${e.params.allowedValues.join(', ')}` : '';
      return `${name} ${e.message ?? 'is invalid'}${allowed}`;
    })
    .join('; ');
}

/** The first line of the file a *_FILE variable names, trimmed; a ConfigError naming the variable if unreadable. */
function firstLineOf(variable: string, file: string): string {
  try {
    return (readFileSync(file, 'utf8').split(/\r?\n/)[0] ?? '').trim();
  } catch {
    throw new ConfigError(`invalid configuration: ${variable} cannot be read (${file})`);
  }
}

/** REDIS_URL, or the first line of REDIS_URL_FILE (so a password can come from a mounted secret). */
function readRedisUrl(raw: Raw): string | undefined {
  const { REDIS_URL: inline, REDIS_URL_FILE: file } = raw;
  if (inline !== undefined && file !== undefined) {
    throw new ConfigError('invalid configuration: set REDIS_URL or REDIS_URL_FILE, not both');
  }
  if (file === undefined) return inline;
  const url = firstLineOf('REDIS_URL_FILE', file);
  if (!/^rediss?:\/\//.test(url)) {
    throw new ConfigError('invalid configuration: REDIS_URL_FILE must hold a redis:// or rediss:// URL on its first line');
  }
  return url;
}

/** The fewest characters an audit hash key may have: 256 bits of a random hex or base64 secret. */
export const MIN_AUDIT_HASH_KEY_CHARS = 32;

/** The audit HMAC key: the first line of AUDIT_HASH_KEY_FILE, as text (so `openssl dgst -hmac` takes it as is). */
function readAuditHashKey(file: string | undefined): Buffer | undefined {
  if (file === undefined) return undefined;
  const key = firstLineOf('AUDIT_HASH_KEY_FILE', file);
  if (key.length < MIN_AUDIT_HASH_KEY_CHARS) {
    throw new ConfigError(`invalid configuration: AUDIT_HASH_KEY_FILE must hold a key of at least ${MIN_AUDIT_HASH_KEY_CHARS} characters on its first line (e.g. openssl rand -hex 32)`);
  }
  return Buffer.from(key, 'utf8');
}

/** The key of WEBHOOK_SECRET, or of the first line of WEBHOOK_SECRET_FILE (a mounted secret keeps it out of the env). */
function readWebhookSecret(raw: Raw): Buffer | undefined {
  const { WEBHOOK_SECRET: inline, WEBHOOK_SECRET_FILE: file } = raw;
  if (inline !== undefined && file !== undefined) {
    throw new ConfigError('invalid configuration: set WEBHOOK_SECRET or WEBHOOK_SECRET_FILE, not both');
  }
  let secret = inline;
  if (file !== undefined) {
    try {
      secret = readFileSync(file, 'utf8').trim();
    } catch {
      throw new ConfigError(`invalid configuration: WEBHOOK_SECRET_FILE cannot be read (${file})`);
    }
  }
  if (secret === undefined) return undefined;
  // The signer's own parser is the one definition of a usable secret (prefix, base64, key length).
  try {
    return parseWebhookSecret(secret);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new ConfigError(`invalid configuration: ${file === undefined ? message : `${message} (read from WEBHOOK_SECRET_FILE)`}`);
  }
}

function parseTrustProxy(value: string): TrustProxy {
  const v = value.trim().toLowerCase();
  if (v === 'false' || v === '') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return Number(v);
  const entries = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const entry of entries) {
    if (entry === 'loopback' || entry === 'linklocal' || entry === 'uniquelocal') continue;
    const [addr, bits, extra] = entry.split('/');
    const family = isIP(addr ?? '');
    const maxBits = family === 6 ? 128 : 32;
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits);
    if (family === 0 || !bitsOk || extra !== undefined) {
      throw new ConfigError(
        `invalid configuration: TRUST_PROXY must be false, true, a hop count or a comma list of addresses, CIDRs, loopback, linklocal or uniquelocal (bad entry "${entry}")`,
      );
    }
  }
  return entries;
}

/** The webhook allow-list, parsed by the same rules the SSRF guard compares webhook URLs with. */
function readAllowedHosts(value: string): string[] {
  try {
    return [...parseAllowedHosts(value)];
  } catch (err) {
    throw new ConfigError(`invalid configuration: ${err instanceof Error ? err.message : String(err)}`);
  }
}
