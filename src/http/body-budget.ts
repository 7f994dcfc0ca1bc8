// Memory bounded by admission: a budget of request-body bytes in flight across every request and key.
// A body is counted from the moment it is admitted (its Content-Length, or a chunked body's bytes as
// they arrive) until its answer is written: its text stays in memory, parsed and scored, all that time.
// Beyond the budget a request gets 503 with Retry-After at once, before its body is read; one that could
// never fit gets 413. Without it, three maximum-size batches took the process past a 1 GiB limit.
// One key holds at most the budget less one maximum-size body (and at least one such body): a body is
// reserved at its declared length before it arrives, so without that one key's stalled uploads could
// hold the whole budget until the request timeout and refuse every other key.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Transform, type Readable } from 'node:stream';
import { HttpError } from './errors.ts';

/** What a reservation gets: made, or refused by the whole budget or by the key's share of it. */
type Reservation = 'ok' | 'full' | 'key_share';

export class BodyBudget {
  readonly limit: number;
  /** The most one key may hold at once. */
  readonly perKey: number;
  #used = 0;
  readonly #byKey = new Map<string, number>();
  /** `bodyLimit`: the largest body a request may have; the other keys always keep room for one. */
  constructor(limit: number, bodyLimit: number = limit) {
    this.limit = limit;
    this.perKey = Math.min(limit, Math.max(bodyLimit, limit - bodyLimit));
  }
  /** Bytes of admitted bodies whose answers are not written yet. */
  get used(): number {
    return this.#used;
  }
  /** 'ok' and reserved, or which limit refuses `bytes` more for `key`. */
  tryReserve(bytes: number, key: string): Reservation {
    const held = this.#byKey.get(key) ?? 0;
    if (held + bytes > this.perKey) return 'key_share';
    if (this.#used + bytes > this.limit) return 'full';
    this.#used += bytes;
    this.#byKey.set(key, held + bytes);
    return 'ok';
  }
  release(bytes: number, key: string): void {
    this.#used = Math.max(0, this.#used - bytes);
    const left = (this.#byKey.get(key) ?? 0) - bytes;
    if (left > 0) this.#byKey.set(key, left);
    else this.#byKey.delete(key);
  }
}

const refusal = (why: Exclude<Reservation, 'ok'>) =>
  new HttpError({ code: why === 'full' ? 'body_budget_full' : 'key_body_budget_full' }, { drainBody: true });
const neverFits = (limit: number) => new HttpError({ code: 'body_over_inflight_limit', params: { limit } }, { drainBody: true });
const overRouteLimit = (limit: number) => new HttpError({ code: 'body_too_large', params: { limit } }, { drainBody: true });

/** Holds bytes of the budget for this request until its answer is written or its connection drops. */
function holdUntilAnswered(budget: BodyBudget, key: string, reply: FastifyReply): (bytes: number) => Reservation {
  let held = 0;
  reply.raw.once('close', () => {
    budget.release(held, key);
    held = 0;
  });
  return (bytes) => {
    const answer = budget.tryReserve(bytes, key);
    if (answer === 'ok') held += bytes;
    return answer;
  };
}

/** Registers the budget on a scope (after authentication: an unauthenticated body is never read). */
export function registerBodyBudget(scope: FastifyInstance, budget: BodyBudget): void {
  // Callback style, not async: it runs on every protected request.
  scope.addHook('preParsing', (request: FastifyRequest, reply: FastifyReply, payload: Readable, done: (err: Error | null, stream?: Readable) => void) => {
    // After authentication, so every request here has a key.
    const key = request.apiKeyId ?? '';
    // A body over its route's own limit is refused 413 before the budget is asked: it could never be
    // admitted, so "retry later" (503) would be wrong, and a body over a key's share is always over
    // the route's limit too (the share is at least one BODY_LIMIT_BYTES body).
    const routeLimit = request.routeOptions.bodyLimit ?? budget.limit;
    const declared = request.headers['content-length'];
    if (declared !== undefined) {
      const length = Number(declared);
      // A bodiless request (a GET, a poll) holds nothing and needs no listener.
      if (length === 0) return done(null, payload);
      if (length > routeLimit) return done(overRouteLimit(routeLimit));
      if (length > budget.limit) return done(neverFits(budget.limit));
      const answer = holdUntilAnswered(budget, key, reply)(length);
      return answer === 'ok' ? done(null, payload) : done(refusal(answer));
    }
    if (request.headers['transfer-encoding'] === undefined) return done(null, payload);
    // Chunked: counted as it arrives, refused at the first chunk that does not fit; 413 once the body
    // alone is past its route's limit or the whole budget (it could never fit).
    const hold = holdUntilAnswered(budget, key, reply);
    let total = 0;
    done(
      null,
      payload.pipe(
        new Transform({
          transform(chunk: Buffer, _encoding, callback) {
            total += chunk.length;
            if (total > routeLimit) return callback(overRouteLimit(routeLimit));
            if (total > budget.limit) return callback(neverFits(budget.limit));
            const answer = hold(chunk.length);
            if (answer !== 'ok') return callback(refusal(answer));
            callback(null, chunk);
          },
        }),
      ),
    );
  });
}
