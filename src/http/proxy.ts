// TLS_MODE=off behind a TLS-terminating proxy: a request the trusted proxy says arrived over plain
// HTTP is redirected to HTTPS. The header is believed only from an address TRUST_PROXY trusts.
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyInstance } from 'fastify';
import type { TrustProxy } from '../config.ts';

/** Whether a direct peer at `address` is a proxy whose forwarding headers we believe. */
export function trustsPeer(trust: TrustProxy): (address: string | undefined) => boolean {
  if (trust === false || trust === 0) return () => false;
  if (trust === true || typeof trust === 'number') return () => true;
  const compiled = proxyAddr.compile(trust);
  return (address) => address !== undefined && compiled(address, 0);
}

export function redirectForwardedHttp(app: FastifyInstance, trust: TrustProxy): void {
  const trusted = trustsPeer(trust);
  app.addHook('onRequest', async (request, reply) => {
    const proto = request.headers['x-forwarded-proto'];
    if (proto === undefined || !trusted(request.raw.socket?.remoteAddress)) return;
    // request.protocol takes the last entry of the header, as the nearest proxy wrote it.
    if (request.protocol === 'http') {
      return reply.code(308).header('location', `https://${request.host}${request.url}`).send();
    }
  });
}
