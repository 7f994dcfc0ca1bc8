// Job state in Redis, shared by every replica: the same JobStore as MemoryJobStore. Each change that
// reads before it writes is one Lua script, so replicas racing on a job or a limit never double-count.
// Only scores, ids, counters and the sealed webhook URL are stored; finished jobs expire after
// JOB_RESULT_TTL_MS.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ItemResult } from '../types.ts';
import type { Sealer } from './sealing.ts';
import type { JobLimits, JobRecord, JobStore, Lease, Reservation } from '../store.ts';
import { JobsUnavailableError, type JobStatus, type WebhookStatus } from '../types.ts';

// Milliseconds by the server's clock, so replicas whose clocks differ agree on when a lease lapses.
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

const RESERVE = `
-- reserve: counts a submission under its lease
if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[1]) then return 1 end
if tonumber(redis.call('GET', KEYS[3]) or '0') + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return 2 end
redis.call('INCR', KEYS[1]) redis.call('INCR', KEYS[2])
redis.call('INCRBY', KEYS[3], ARGV[2]) redis.call('INCRBY', KEYS[4], ARGV[4])
${NOW}
redis.call('HSET', KEYS[5], ARGV[5], ARGV[7])
redis.call('ZADD', KEYS[6], now + tonumber(ARGV[6]), ARGV[5])
return 0`;

const DUE = `
${NOW}
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))`;

// The job exists only while its lease does, or once committed: a lapsed submission stores nothing.
const CREATE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {0} end
if KEYS[3] and not redis.call('SET', KEYS[3], ARGV[1], 'NX') then return {2, redis.call('GET', KEYS[3])} end
redis.call('HSET', KEYS[2], unpack(ARGV, 2))
return {1}`;

const COMMIT = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`;

// ARGV[2] == '1': only a lapsed lease (the sweep, which may race the submission's own commit).
// A job whose items already run (queued before the failure, and taken by a worker) is kept and
// committed instead: its items free their own budget, so giving the lease's back would count twice.
const ABANDON = `
local lease = redis.call('HGET', KEYS[1], ARGV[1])
if not lease then return 0 end
if ARGV[2] == '1' then
  ${NOW}
  local due = redis.call('ZSCORE', KEYS[2], ARGV[1])
  if due and tonumber(due) > now then return 0 end
end
redis.call('HDEL', KEYS[1], ARGV[1]) redis.call('ZREM', KEYS[2], ARGV[1])
local status = redis.call('HGET', KEYS[7], 'status')
if (status and status ~= 'queued') or redis.call('SCARD', KEYS[9]) > 0 then return 2 end
local l = cjson.decode(lease)
redis.call('DECR', KEYS[3]) redis.call('DECR', KEYS[4])
redis.call('DECRBY', KEYS[5], l.c) redis.call('DECRBY', KEYS[6], l.n)
redis.call('DEL', KEYS[7], KEYS[8], KEYS[9])
if KEYS[10] and redis.call('GET', KEYS[10]) == ARGV[1] then redis.call('DEL', KEYS[10]) end
return 1`;

const MARK_STARTED = `
if redis.call('HGET', KEYS[1], 'status') == 'queued' then
  redis.call('HSET', KEYS[1], 'status', 'running', 'startedAt', ARGV[1])
end
return 0`;

// HSET answers 1 only for a new field: an item scored twice (BullMQ may run one twice) counts once.
const ADD_RESULT = `
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
if redis.call('HSET', KEYS[2], ARGV[1], ARGV[2]) == 1 then redis.call('HINCRBY', KEYS[1], 'done', 1) end
return 1`;

const FAIL = `
local s = redis.call('HGET', KEYS[1], 'status')
if s ~= 'queued' and s ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'failed', 'error', ARGV[1])
return 1`;

// Once per item index: a second report of the same item frees no budget and counts nothing, nor
// does an item of a job that is gone (expired, or abandoned after its items were queued).
const ITEM_FINISHED = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('SADD', KEYS[4], ARGV[2]) == 0 then return redis.call('SCARD', KEYS[4]) end
redis.call('DECRBY', KEYS[2], ARGV[1]) redis.call('DECR', KEYS[3])
return redis.call('SCARD', KEYS[4])`;

const COMPLETE = `
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'completedAt') == 1 then return 0 end
if redis.call('HGET', KEYS[1], 'status') ~= 'failed' then redis.call('HSET', KEYS[1], 'status', 'done') end
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'completedAt', ARGV[1], 'expiresAt', tonumber(ARGV[1]) + ttl)
redis.call('DECR', KEYS[3]) redis.call('DECR', KEYS[4])
redis.call('PEXPIRE', KEYS[1], ttl) redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[5], ttl)
if KEYS[6] then redis.call('PEXPIRE', KEYS[6], ttl) end
return 1`;

// ARGV[1]: when the first delivery attempt began, or '' if not given; the rest: fields to set. The
// first attempt's time is kept once set, so two replicas delivering at once cannot stretch the budget;
// a delivered webhook stays delivered, whatever a replica that lost its lock reports after.
// A webhook's attempts (ARGV[2], '' for none) only ever go up: a replica whose lock lapsed cannot
// write an older count back.
const RAISE_ATTEMPTS = `if ARGV[2] ~= '' and tonumber(ARGV[2]) > (tonumber(redis.call('HGET', KEYS[1], 'webhookAttempts')) or 0) then
  redis.call('HSET', KEYS[1], 'webhookAttempts', ARGV[2])
end`;
/** RAISE_ATTEMPTS's ARGV[2]. */
const attemptsArg = (attempts: number | undefined): string => (attempts === undefined ? '' : String(attempts));

const UPDATE_WEBHOOK = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HGET', KEYS[1], 'webhookStatus') == 'delivered' then return 0 end
if ARGV[1] ~= '' then redis.call('HSETNX', KEYS[1], 'webhookFirstAttemptAt', ARGV[1]) end
${RAISE_ATTEMPTS}
if #ARGV > 2 then redis.call('HSET', KEYS[1], unpack(ARGV, 3)) end
return 1`;

// ARGV[1]: why; ARGV[2]: the attempts made, or ''. Only a pending webhook ends so: 1 when it did.
const FAIL_PENDING_WEBHOOK = `
if redis.call('HGET', KEYS[1], 'webhookStatus') ~= 'pending' then return 0 end
redis.call('HSET', KEYS[1], 'webhookStatus', 'failed', 'webhookLastError', ARGV[1])
${RAISE_ATTEMPTS}
return 1`;

/** Results read per HMGET. */
const RESULTS_CHUNK = 10_000;

/** A lease as stored: short keys, since every pending submission holds one. */
interface StoredLease {
  /** keyId */
  k: string;
  /** chars */
  c: number;
  /** items */
  n: number;
  /** the Idempotency-Key's Redis key */
  i?: string;
}

/** Lapsed leases given back per sweep: a sweep runs before each reservation, so a backlog clears. */
const SWEEP_BATCH = 16;

const STATUSES: readonly JobStatus[] = ['queued', 'running', 'done', 'failed'];
const WEBHOOK_STATUSES: readonly WebhookStatus[] = ['pending', 'delivered', 'failed'];

/** The additional data a job's webhook URL is sealed with: it opens for that job only. */
const webhookUrlContext = (jobId: string) => `${jobId}:webhook_url`;

export class RedisJobStore implements JobStore {
  readonly #redis: Redis;
  readonly #p: string;
  readonly #leaseMs: number;
  readonly #sealer: Sealer;

  /**
   * `leaseMs`: how long a submission may take from reserve to commit before its counts are given back.
   * `sealer`: seals the webhook URL (its query may carry the receiver's token), as queued items are.
   */
  constructor(redis: Redis, prefix: string, options: { leaseMs: number; sealer: Sealer }) {
    this.#redis = redis;
    this.#p = prefix;
    this.#leaseMs = options.leaseMs;
    this.#sealer = options.sealer;
  }

  #job(id: string): string {
    return `${this.#p}:job:${id}`;
  }
  #results(id: string): string {
    return `${this.#p}:job:${id}:results`;
  }
  #finished(id: string): string {
    return `${this.#p}:job:${id}:finished`;
  }
  #idem(keyId: string, key: string): string {
    // Hashed: the caller's Idempotency-Key may hold any characters.
    return `${this.#p}:idem:${keyId}:${createHash('sha256').update(key).digest('hex')}`;
  }
  #counter(name: 'unfinished' | 'chars' | 'pending'): string {
    return `${this.#p}:${name}`;
  }
  #unfinishedFor(keyId: string): string {
    return `${this.#p}:unfinished:${keyId}`;
  }
  #leases(): [string, string] {
    return [`${this.#p}:leases`, `${this.#p}:lease-deadlines`];
  }

  /** Runs a Redis call; a connection problem becomes JobsUnavailableError (503 with Retry-After). */
  async #do<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw new JobsUnavailableError('the job store (Redis) cannot be reached', { cause: err });
    }
  }

  async reserve(lease: Lease, limits: JobLimits): Promise<Reservation> {
    await this.#sweep();
    const stored: StoredLease = { k: lease.keyId, c: lease.chars, n: lease.items };
    if (lease.idempotencyKey !== undefined) stored.i = this.#idem(lease.keyId, lease.idempotencyKey);
    const keys = [this.#unfinishedFor(lease.keyId), this.#counter('unfinished'), this.#counter('chars'), this.#counter('pending'), ...this.#leases()];
    const args = [limits.perKey, lease.chars, limits.maxChars, lease.items, lease.jobId, this.#leaseMs, JSON.stringify(stored)];
    const r = await this.#do(() => this.#redis.eval(RESERVE, keys.length, ...keys, ...args));
    return r === 1 ? 'per_key_limit' : r === 2 ? 'queue_full' : 'ok';
  }

  async create(record: JobRecord): Promise<{ created: true } | { created: false; existingJobId: string }> {
    const fields: Record<string, string> = {
      keyId: record.keyId,
      status: record.status,
      createdAt: String(record.createdAt),
      ids: JSON.stringify(record.ids),
      done: '0',
      finished: '0',
    };
    if (record.webhook !== undefined) {
      fields.webhookUrl = this.#sealer.sealText(record.webhook.url, webhookUrlContext(record.id));
      fields.webhookStatus = record.webhook.status;
      fields.webhookAttempts = String(record.webhook.attempts);
    }
    if (record.idempotency !== undefined) {
      fields.idemKey = record.idempotency.key;
      fields.fingerprint = record.idempotency.fingerprint;
    }
    const keys = [this.#leases()[0], this.#job(record.id)];
    if (record.idempotency !== undefined) keys.push(this.#idem(record.keyId, record.idempotency.key));
    const [outcome, existing] = (await this.#do(() => this.#redis.eval(CREATE, keys.length, ...keys, record.id, ...Object.entries(fields).flat()))) as [number, string?];
    if (outcome === 0) throw new JobsUnavailableError(`the submission of job ${record.id} took longer than its lease (JOB_LOCK_MS)`);
    return outcome === 2 && existing !== undefined ? { created: false, existingJobId: existing } : { created: true };
  }

  async commit(jobId: string): Promise<boolean> {
    const keys = this.#leases();
    return (await this.#do(() => this.#redis.eval(COMMIT, keys.length, ...keys, jobId))) === 1;
  }

  async abandon(jobId: string): Promise<void> {
    await this.#abandon(jobId, false);
  }

  /** Gives back leases that lapsed: their submissions will never commit. */
  async #sweep(): Promise<void> {
    const due = (await this.#do(() => this.#redis.eval(DUE, 1, this.#leases()[1], SWEEP_BATCH))) as string[];
    // Best effort: one lease that cannot be given back must not refuse every submission.
    for (const jobId of due) await this.#abandon(jobId, true).catch(() => undefined);
  }

  async #abandon(jobId: string, onlyLapsed: boolean): Promise<void> {
    const [leases, deadlines] = this.#leases();
    const raw = await this.#do(() => this.#redis.hget(leases, jobId));
    if (raw === null) {
      // Committed or given back since. A deadline without its lease cannot be written, but one would be
      // read by every sweep, so it goes.
      if (onlyLapsed) await this.#do(() => this.#redis.zrem(deadlines, jobId));
      return;
    }
    const lease = JSON.parse(raw) as StoredLease;
    const keys = [leases, deadlines, this.#unfinishedFor(lease.k), this.#counter('unfinished'), this.#counter('chars'), this.#counter('pending')];
    keys.push(this.#job(jobId), this.#results(jobId), this.#finished(jobId));
    if (lease.i !== undefined) keys.push(lease.i);
    await this.#do(() => this.#redis.eval(ABANDON, keys.length, ...keys, jobId, onlyLapsed ? '1' : '0'));
  }

  async get(jobId: string): Promise<JobRecord | undefined> {
    const h = await this.#do(() => this.#redis.hgetall(this.#job(jobId)));
    if (h.keyId === undefined || h.ids === undefined) return undefined;
    const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
    const record: JobRecord = {
      id: jobId,
      keyId: h.keyId,
      status: STATUSES.includes(h.status as JobStatus) ? (h.status as JobStatus) : 'failed',
      createdAt: Number(h.createdAt),
      ids: JSON.parse(h.ids) as string[],
      done: Number(h.done ?? 0),
    };
    const startedAt = num(h.startedAt);
    const completedAt = num(h.completedAt);
    const expiresAt = num(h.expiresAt);
    if (startedAt !== undefined) record.startedAt = startedAt;
    if (completedAt !== undefined) record.completedAt = completedAt;
    if (expiresAt !== undefined) {
      if (Date.now() >= expiresAt) return undefined;
      record.expiresAt = expiresAt;
    }
    if (h.error !== undefined) record.error = h.error;
    if (h.webhookUrl !== undefined) {
      const firstAttemptAt = num(h.webhookFirstAttemptAt);
      record.webhook = {
        url: this.#openWebhookUrl(jobId, h.webhookUrl),
        status: WEBHOOK_STATUSES.includes(h.webhookStatus as WebhookStatus) ? (h.webhookStatus as WebhookStatus) : 'pending',
        attempts: Number(h.webhookAttempts ?? 0),
        ...(firstAttemptAt !== undefined && Number.isFinite(firstAttemptAt) ? { firstAttemptAt } : {}),
        ...(h.webhookLastError === undefined ? {} : { lastError: h.webhookLastError }),
      };
    }
    if (h.idemKey !== undefined && h.fingerprint !== undefined) record.idempotency = { key: h.idemKey, fingerprint: h.fingerprint };
    return record;
  }

  /** The stored URL opened, or '' when it cannot be (sealed under another REDIS_ENCRYPTION_KEY_FILE, or altered). */
  #openWebhookUrl(jobId: string, stored: string): string {
    // Written by a version that stored the URL as it came (a rolling upgrade, or a job from before it
    // until it expires): read as it is. Sealed text is base64, so it never starts like this.
    if (stored.startsWith('https://') || stored.startsWith('http://')) return stored;
    try {
      return this.#sealer.openText(stored, webhookUrlContext(jobId));
    } catch {
      return '';
    }
  }

  async results(record: JobRecord): Promise<Record<string, ItemResult>> {
    // HMGET answers in the ids' order: no lookup of caller-chosen ids (`constructor`, `__proto__`) in
    // an object, where a missing result would find Object.prototype's members instead.
    // Asked in chunks, so no JOB_MAX_ITEMS spreads past a call's argument limit.
    const entries: Array<[string, ItemResult]> = [];
    for (let start = 0; start < record.ids.length; start += RESULTS_CHUNK) {
      const ids = record.ids.slice(start, start + RESULTS_CHUNK);
      const stored = await this.#do(() => this.#redis.hmget(this.#results(record.id), ...ids));
      ids.forEach((id, i) => {
        const r = stored[i];
        if (typeof r === 'string') entries.push([id, JSON.parse(r) as ItemResult]);
      });
    }
    return Object.fromEntries(entries);
  }

  async findIdempotent(keyId: string, key: string): Promise<string | undefined> {
    return (await this.#do(() => this.#redis.get(this.#idem(keyId, key)))) ?? undefined;
  }

  async markStarted(jobId: string, at: number): Promise<void> {
    await this.#do(() => this.#redis.eval(MARK_STARTED, 1, this.#job(jobId), at));
  }

  async addResult(jobId: string, conversationId: string, result: ItemResult): Promise<void> {
    await this.#do(() => this.#redis.eval(ADD_RESULT, 2, this.#job(jobId), this.#results(jobId), conversationId, JSON.stringify(result)));
  }

  async fail(jobId: string, error: string): Promise<boolean> {
    return (await this.#do(() => this.#redis.eval(FAIL, 1, this.#job(jobId), error))) === 1;
  }

  async itemFinished(jobId: string, chars: number, index: number): Promise<number> {
    const keys = [this.#job(jobId), this.#counter('chars'), this.#counter('pending'), this.#finished(jobId)];
    return Number(await this.#do(() => this.#redis.eval(ITEM_FINISHED, keys.length, ...keys, chars, index)));
  }

  async complete(jobId: string, at: number, ttlMs: number): Promise<JobRecord | undefined> {
    const before = await this.get(jobId);
    if (before === undefined) return undefined;
    const keys = [this.#job(jobId), this.#results(jobId), this.#unfinishedFor(before.keyId), this.#counter('unfinished'), this.#finished(jobId)];
    if (before.idempotency !== undefined) keys.push(this.#idem(before.keyId, before.idempotency.key));
    const ended = await this.#do(() => this.#redis.eval(COMPLETE, keys.length, ...keys, at, ttlMs));
    return ended === 1 ? this.get(jobId) : undefined;
  }

  async updateWebhook(jobId: string, patch: Partial<NonNullable<JobRecord['webhook']>>): Promise<void> {
    const args: string[] = [];
    if (patch.status !== undefined) args.push('webhookStatus', patch.status);
    if (patch.lastError !== undefined) args.push('webhookLastError', patch.lastError);
    const first = patch.firstAttemptAt === undefined ? '' : String(patch.firstAttemptAt);
    const attempts = attemptsArg(patch.attempts);
    if (args.length === 0 && first === '' && attempts === '') return;
    await this.#do(() => this.#redis.eval(UPDATE_WEBHOOK, 1, this.#job(jobId), first, attempts, ...args));
  }

  async failPendingWebhook(jobId: string, lastError: string, attempts?: number): Promise<boolean> {
    return (await this.#do(() => this.#redis.eval(FAIL_PENDING_WEBHOOK, 1, this.#job(jobId), lastError, attemptsArg(attempts)))) === 1;
  }

  async counts(): Promise<{ unfinishedJobs: number; pendingItems: number }> {
    // The gauges read true between submissions too.
    await this.#sweep();
    const [unfinished, pending] = await this.#do(() => this.#redis.mget(this.#counter('unfinished'), this.#counter('pending')));
    return { unfinishedJobs: Number(unfinished ?? 0), pendingItems: Number(pending ?? 0) };
  }

  async close(): Promise<void> {
    // The connection is shared and closed by its owner.
  }
}
