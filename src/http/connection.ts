// What a request's connection still allows. Once an answer says `Connection: close` (a malformed body,
// refused framing), Node still hands over every request pipelined behind it on that socket, but none
// of their answers will be written. Such requests are not scored, work already queued for them is
// withdrawn when the socket closes, and the connection's log says how many were dropped, once.
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';

/** A request whose answer can no longer reach its client: its connection is closing or closed. */
export class ConnectionClosedError extends Error {
  override name = 'ConnectionClosedError';
  constructor() {
    super('the connection closed before the answer');
  }
}

interface ConnectionState {
  /** An answer on it said `Connection: close`: nothing after it will be answered. */
  closing: boolean;
  /** Work under way for requests on it, withdrawn when it closes. */
  readonly inFlight: Set<AbortController>;
  /** Requests refused or withdrawn because of it, logged once when it closes. */
  dropped: number;
}

const connections = new WeakMap<Socket, ConnectionState>();

/** The socket's state; one 'close' listener per socket however many requests it carries. */
function stateOf(socket: Socket, log: FastifyBaseLogger): ConnectionState {
  let state = connections.get(socket);
  if (state !== undefined) return state;
  const created: ConnectionState = { closing: false, inFlight: new Set(), dropped: 0 };
  socket.once('close', () => {
    for (const controller of created.inFlight) controller.abort();
    created.dropped += created.inFlight.size;
    created.inFlight.clear();
    if (created.dropped > 0) log.info({ dropped_requests: created.dropped }, 'connection closed with requests unanswered: they were not scored');
  });
  connections.set(socket, created);
  return created;
}

/**
 * An AbortSignal for work done for `request`, aborted if its connection closes before the answer is
 * written; throws ConnectionClosedError when the answer can already not be written. Call `done` after.
 */
export function connectionSignal(request: FastifyRequest): { signal: AbortSignal; done: () => void } {
  const socket = request.raw.socket as Socket | null;
  if (socket === null) return { signal: new AbortController().signal, done: () => {} };
  const state = stateOf(socket, request.log);
  // Compared with true and false: light-my-request's stand-in socket (inject) has neither property.
  if (state.closing || socket.destroyed === true || socket.writable === false) {
    state.dropped += 1;
    throw new ConnectionClosedError();
  }
  const controller = new AbortController();
  state.inFlight.add(controller);
  return { signal: controller.signal, done: () => state.inFlight.delete(controller) };
}

/** Marks a connection closing once an answer on it says `Connection: close`. */
export function registerConnectionTracking(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const socket = request.raw.socket as Socket | null;
    const connection = reply.getHeader('connection');
    if (socket !== null && connection !== undefined && String(connection).toLowerCase() === 'close') stateOf(socket, request.log).closing = true;
    done(null, payload);
  });
}
