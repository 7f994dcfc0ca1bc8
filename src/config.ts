// Every setting of the appliance, read once from the environment and validated with env-schema.
// A bad value throws a ConfigError naming the variable; main.ts turns it into a non-zero exit.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { fileURLToPath } from 'node:url';
import envSchema from 'env-schema';
import { parseWebhookSecret } from './jobs/signing.ts';

/** What fastify's `trustProxy` accepts, parsed from TRUST_PROXY. */
export type TrustProxy = boolean | number | string[];

export interface Config {
  HOST: string;
  PORT: number;
  HTTP_PORT: number;
  TLS_MODE: 'on' | 'off';
  TLS_CERT_FILE: string | undefined;
  TLS_KEY_FILE: string | undefined;
  TRUST_PROXY: TrustProxy;
  API_KEYS: string | undefined;
  API_KEYS_FILE: string | undefined;
  RATE_LIMIT_MAX: number;
  RATE_LIMIT_WINDOW_MS: number;
  METRICS_PORT: number;
  METRICS_HOST: string;
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  AUDIT_LOG: boolean;
  MODEL_DIR: string;
  WORKERS: number;
  INTRA_OP_THREADS: number;
  MAX_QUEUE: number;
  REQUEST_TIMEOUT_MS: number;
  SHUTDOWN_GRACE_MS: number;
  BODY_LIMIT_BYTES: number;
  // Preview /v2 settings: declared here so every variable is validated in one place.
  WEBHOOK_SECRET: string | undefined;
  WEBHOOK_ALLOWED_HOSTS: string[];
  WEBHOOK_ALLOW_HTTP: boolean;
  WEBHOOK_RETRY_BASE_MS: number;
  WEBHOOK_MAX_ATTEMPTS: number;
  WEBHOOK_MAX_RETRY_MS: number;
  WEBHOOK_TIMEOUT_MS: number;
  JOB_MAX_ITEMS: number;
  JOB_MAX_QUEUED_PER_KEY: number;
  JOB_MAX_QUEUED_CHARS: number;
  JOB_RESULT_TTL_MS: number;
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

/** The JSON Schema env-schema validates against; README's configuration table mirrors it. */
export const configSchema = {
  type: 'object',
  properties: {
    HOST: { type: 'string', minLength: 1, default: '0.0.0.0' },
    PORT: port(8443),
    HTTP_PORT: port(8080),
    TLS_MODE: { type: 'string', enum: ['on', 'off'], default: 'on' },
    TLS_CERT_FILE: { type: 'string', minLength: 1 },
    TLS_KEY_FILE: { type: 'string', minLength: 1 },
    TRUST_PROXY: { type: 'string', default: 'false' },
    API_KEYS: { type: 'string' },
    API_KEYS_FILE: { type: 'string', minLength: 1 },
    RATE_LIMIT_MAX: positive(60),
    RATE_LIMIT_WINDOW_MS: positive(60_000),
    METRICS_PORT: port(9464),
    METRICS_HOST: { type: 'string', minLength: 1 },
    LOG_LEVEL: {
      type: 'string',
      enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      default: 'info',
    },
    AUDIT_LOG: { type: 'boolean', default: false },
    MODEL_DIR: { type: 'string', minLength: 1, default: DEFAULT_MODEL_DIR },
    WORKERS: positive(availableParallelism(), 256),
    INTRA_OP_THREADS: positive(1, 256),
    MAX_QUEUE: positive(64),
    REQUEST_TIMEOUT_MS: positive(30_000),
    SHUTDOWN_GRACE_MS: positive(10_000),
    BODY_LIMIT_BYTES: positive(32 * 1024 * 1024),
    WEBHOOK_SECRET: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$' },
    WEBHOOK_SECRET_FILE: { type: 'string', minLength: 1 },
    WEBHOOK_ALLOWED_HOSTS: { type: 'string', default: '' },
    WEBHOOK_ALLOW_HTTP: { type: 'boolean', default: false },
    WEBHOOK_RETRY_BASE_MS: positive(1000),
    WEBHOOK_MAX_ATTEMPTS: positive(8),
    WEBHOOK_MAX_RETRY_MS: positive(3_600_000),
    WEBHOOK_TIMEOUT_MS: positive(10_000),
    JOB_MAX_ITEMS: positive(1000),
    JOB_MAX_QUEUED_PER_KEY: positive(10),
    JOB_MAX_QUEUED_CHARS: positive(50_000_000),
    JOB_RESULT_TTL_MS: positive(3_600_000),
  },
} as const;

type Raw = Omit<Config, 'TRUST_PROXY' | 'WEBHOOK_ALLOWED_HOSTS' | 'METRICS_HOST'> & {
  WEBHOOK_SECRET_FILE: string | undefined;
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
    // Ajv names the variable as `env/NAME must ...`; say it the operator's way.
    const message = err instanceof Error ? err.message : String(err);
    throw new ConfigError(`invalid configuration: ${message.replaceAll('env/', '')}`);
  }
  if ((raw.TLS_CERT_FILE === undefined) !== (raw.TLS_KEY_FILE === undefined)) {
    throw new ConfigError('invalid configuration: TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  if (raw.API_KEYS !== undefined && raw.API_KEYS_FILE !== undefined) {
    throw new ConfigError('invalid configuration: set API_KEYS or API_KEYS_FILE, not both');
  }
  const webhookSecret = readWebhookSecret(raw);
  return {
    ...raw,
    // Optional settings are always present, undefined when unset, so Config reads the same everywhere.
    TLS_CERT_FILE: raw.TLS_CERT_FILE,
    TLS_KEY_FILE: raw.TLS_KEY_FILE,
    API_KEYS: raw.API_KEYS,
    API_KEYS_FILE: raw.API_KEYS_FILE,
    WEBHOOK_SECRET: webhookSecret,
    METRICS_HOST: raw.METRICS_HOST ?? raw.HOST,
    TRUST_PROXY: parseTrustProxy(raw.TRUST_PROXY),
    WEBHOOK_ALLOWED_HOSTS: parseHostList(raw.WEBHOOK_ALLOWED_HOSTS),
  };
}

/** WEBHOOK_SECRET, or the first line of WEBHOOK_SECRET_FILE (a mounted secret keeps it out of the env). */
function readWebhookSecret(raw: Raw): string | undefined {
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
    parseWebhookSecret(secret);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new ConfigError(`invalid configuration: ${file === undefined ? message : `${message} (read from WEBHOOK_SECRET_FILE)`}`);
  }
  return secret;
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

function parseHostList(value: string): string[] {
  const entries = value.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
  for (const entry of entries) {
    const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/.exec(entry);
    if (!m || Number(m[2]) > 65535) {
      throw new ConfigError(`invalid configuration: WEBHOOK_ALLOWED_HOSTS entries must be host:port (bad entry "${entry}")`);
    }
  }
  return entries;
}
