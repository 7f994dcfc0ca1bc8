// TLS_MODE=off behind a TLS-terminating proxy: a request the trusted proxy says arrived over plain
// HTTP is redirected to HTTPS. The header is believed only from an address TRUST_PROXY trusts.
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyInstance } from 'fastify';
import type { Config, TrustProxy } from '../config.ts';
import { HttpError } from './errors.ts';
import { httpsLocation, REDIRECT_HEADERS } from './listeners.ts';

/** Whether a direct peer at `address` is a proxy whose forwarding headers we believe. */
export function trustsPeer(trust: TrustProxy): (address: string | undefined) => boolean {
  if (trust === false || trust === 0) return () => false;
  if (trust === true || typeof trust === 'number') return () => true;
  const compiled = proxyAddr.compile(trust);
  return (address) => address !== undefined && compiled(address, 0);
}

export function redirectForwardedHttp(app: FastifyInstance, config: Pick<Config, 'TRUST_PROXY' | 'PUBLIC_HOST' | 'PUBLIC_HTTPS_PORT'>): void {
  const trusted = trustsPeer(config.TRUST_PROXY);
  app.addHook('onRequest', async (request, reply) => {
    const proto = request.headers['x-forwarded-proto'];
    if (proto === undefined || !trusted(request.raw.socket?.remoteAddress)) return;
    // request.protocol takes the last entry of the header, as the nearest proxy wrote it.
    if (request.protocol === 'http') {
      // request.host: X-Forwarded-Host from the trusted proxy, else Host; checked like the HTTP port's.
      const location = httpsLocation(request.host, request.url, config.PUBLIC_HTTPS_PORT ?? 443, config.PUBLIC_HOST);
      if (location === undefined) throw new HttpError({ code: 'host_required' });
      // The HTTP port's answer (listeners.ts createRedirectServer): the same body, so a client sees one redirect.
      return reply.code(308).headers({ location, ...REDIRECT_HEADERS }).send(new HttpError({ code: 'use_https', params: { location } }).body);
    }
  });
}
