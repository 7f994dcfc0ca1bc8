// AUDIT_LOG=true: one line per prediction with what a reviewer may keep. The conversation appears only
// as its SHA-256, or with AUDIT_HASH_KEY_FILE its HMAC-SHA-256 under that key; nothing else about the
// request (no preview, no key, no client address) is written.
import { createHash, createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import type { Prediction } from '../scoring/types.ts';

/**
 * Where a /v2 job's prediction sits: its job and its position there. A job's item can be scored twice
 * (it runs again when Redis went away before its outcome was recorded, or its replica stopped), so a
 * reviewer counts a job's predictions once per (job_id, job_item).
 */
export interface AuditJobRef {
  job_id: string;
  job_item: number;
}

export interface AuditRecord extends Partial<AuditJobRef> {
  /** Without AUDIT_HASH_KEY_FILE: anyone who guesses a short chat's text can confirm it. */
  conversation_sha256?: string;
  /** With AUDIT_HASH_KEY_FILE: confirming a guess needs the key. */
  conversation_hmac_sha256?: string;
  harmful_score: number;
  risk_level: string;
  predatory_user: string;
  model_version: string;
  latency_ms: number;
}

export type AuditSink = (conversation: string, prediction: Prediction, modelVersion: string, latencyMs: number, job?: AuditJobRef) => void;

export const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The audit line's field for the conversation: its plain SHA-256, or its HMAC-SHA-256 under `hashKey`. */
export function conversationDigest(conversation: string, hashKey?: Buffer): Pick<AuditRecord, 'conversation_sha256' | 'conversation_hmac_sha256'> {
  return hashKey === undefined
    ? { conversation_sha256: sha256Hex(conversation) }
    : { conversation_hmac_sha256: createHmac('sha256', hashKey).update(conversation, 'utf8').digest('hex') };
}

export function auditRecord(
  conversation: string,
  prediction: Prediction,
  modelVersion: string,
  latencyMs: number,
  job?: AuditJobRef,
  hashKey?: Buffer,
): AuditRecord {
  return {
    ...conversationDigest(conversation, hashKey),
    harmful_score: prediction.harmful_score,
    risk_level: prediction.risk_level,
    predatory_user: prediction.predatory_user,
    model_version: modelVersion,
    latency_ms: Math.round(latencyMs),
    ...(job === undefined ? {} : { job_id: job.job_id, job_item: job.job_item }),
  };
}

/** An audit sink writing through `logger`, or a no-op when auditing is off; `hashKey` keys the hash. */
export function createAudit(logger: Logger, enabled: boolean, hashKey?: Buffer): AuditSink {
  if (!enabled) return () => {};
  // A child without bindings of the request: the line holds the record and the logger's base fields only.
  // Its own level: AUDIT_LOG asks for the record whatever LOG_LEVEL quiets (warn, error, even silent).
  const audit = logger.child({ log: 'audit' }, { level: 'info' });
  return (conversation, prediction, modelVersion, latencyMs, job) => {
    audit.info({ audit: auditRecord(conversation, prediction, modelVersion, latencyMs, job, hashKey) }, 'prediction');
  };
}
