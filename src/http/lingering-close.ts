// A body refused before it was read (413, or the body budget's 503) is still on its way: closed under
// it, the socket resets and most clients report EPIPE instead of the answer. The rest is read and
// dropped instead, as servers' lingering close does, within DRAIN_MAX_BYTES and REQUEST_TIMEOUT_MS.
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The most of a refused body that is read and dropped so the client sees the answer; past it the
 * connection is reset. Time is bounded too, by REQUEST_TIMEOUT_MS.
 */
export const DRAIN_MAX_BYTES = 256 * 1024 * 1024;

/** Sockets reading and dropping the rest of a body already answered. */
const draining = new WeakSet<object>();

/** Whether the socket is reading the rest of an answered body: a parser error there needs no answer. */
export function isDraining(socket: object): boolean {
  return draining.has(socket);
}

/**
 * Reads and drops what is left of a request's body, then calls `onEnd`; past DRAIN_MAX_BYTES the
 * connection is reset instead of reading on.
 */
export function discardBody(raw: IncomingMessage, onEnd: () => void): void {
  let drained = 0;
  raw.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES) raw.socket.destroy();
  });
  raw.once('end', onEnd);
  raw.resume();
}

/** Reads and drops the rest of the request's body after its refusal is sent, then closes if the client asked. */
export function drainRefusedBody(request: FastifyRequest, reply: FastifyReply): void {
  // Fastify closes the connection after a body error; kept open, the rest of the body is read and
  // dropped (no longer than REQUEST_TIMEOUT_MS allows), as Node does for any unread body.
  reply.removeHeader('connection');
  const socket = request.raw.socket;
  draining.add(socket);
  // A client that sent `Connection: close` (Python's urllib always does) would have the socket
  // closed as soon as the answer is written, with its unread body in the kernel's buffer: a reset,
  // and the client reports EPIPE, never the answer. Kept open until the body is read, then closed.
  const closeAfter = !reply.raw.shouldKeepAlive;
  if (closeAfter) reply.raw.shouldKeepAlive = true;
  discardBody(request.raw, () => {
    draining.delete(socket);
    if (!closeAfter) return;
    // The client asked to close: once the answer is out and its body read, close as it asked.
    if (reply.raw.writableFinished) socket.end();
    else reply.raw.once('finish', () => socket.end());
  });
}
