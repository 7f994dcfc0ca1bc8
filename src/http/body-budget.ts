// Memory bounded by admission: a budget of request-body bytes in flight across every request and key.
// A body is counted from the moment it is admitted (its Content-Length, or a chunked body's bytes as
// they arrive) until its answer is written: its text stays in memory, parsed and scored, all that time.
// Beyond the budget a request gets 503 with Retry-After at once, before its body is read; one that could
// never fit gets 413. Without it, three maximum-size batches took the process past a 1 GiB limit.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Transform, type Readable } from 'node:stream';
import { HttpError } from './errors.ts';

export class BodyBudget {
  readonly limit: number;
  #used = 0;
  constructor(limit: number) {
    this.limit = limit;
  }
  /** Bytes of admitted bodies whose answers are not written yet. */
  get used(): number {
    return this.#used;
  }
  tryReserve(bytes: number): boolean {
    if (this.#used + bytes > this.limit) return false;
    this.#used += bytes;
    return true;
  }
  release(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}

const busy = () =>
  new HttpError({ code: 'body_budget_full' }, { drainBody: true });
const neverFits = (limit: number) => new HttpError({ code: 'body_over_inflight_limit', params: { limit } }, { drainBody: true });

/** Holds `bytes` of the budget for this request until its answer is written or its connection drops. */
function holdUntilAnswered(budget: BodyBudget, reply: FastifyReply): (bytes: number) => void {
  let held = 0;
  reply.raw.once('close', () => {
    budget.release(held);
    held = 0;
  });
  return (bytes) => {
    held += bytes;
  };
}

/** Registers the budget on a scope (after authentication: an unauthenticated body is never read). */
export function registerBodyBudget(scope: FastifyInstance, budget: BodyBudget): void {
  // Callback style, not async: it runs on every protected request.
  scope.addHook('preParsing', (request: FastifyRequest, reply: FastifyReply, payload: Readable, done: (err: Error | null, stream?: Readable) => void) => {
    const declared = request.headers['content-length'];
    if (declared !== undefined) {
      const length = Number(declared);
      // A bodiless request (a GET, a poll) holds nothing and needs no listener.
      if (length === 0) return done(null, payload);
      if (length > budget.limit) return done(neverFits(budget.limit));
      if (!budget.tryReserve(length)) return done(busy());
      holdUntilAnswered(budget, reply)(length);
      return done(null, payload);
    }
    if (request.headers['transfer-encoding'] === undefined) return done(null, payload);
    // Chunked: counted as it arrives, refused at the first chunk that does not fit.
    const hold = holdUntilAnswered(budget, reply);
    done(
      null,
      payload.pipe(
        new Transform({
          transform(chunk: Buffer, _encoding, callback) {
            if (!budget.tryReserve(chunk.length)) return callback(busy());
            hold(chunk.length);
            callback(null, chunk);
          },
        }),
      ),
    );
  });
}
