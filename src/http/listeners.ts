// The sockets: the app on PORT (TLS, or plain behind a proxy), a plain listener on HTTP_PORT that only
// redirects to HTTPS, and the metrics listener on its own port. main.ts starts them; tests too.
import { readFile } from 'node:fs/promises';
import { createServer, type Server, type ServerOptions } from 'node:http';
import { hostname } from 'node:os';
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { generate } from 'selfsigned';
import type { Config } from '../config.ts';
import { clientErrorHandler, errorBody, expectationHandler } from './errors.ts';

/** A certificate and its key, PEM. */
export interface TlsMaterial {
  key: string;
  cert: string;
}

export interface ResolvedTls extends TlsMaterial {
  /** SHA-256 fingerprint of the certificate, `AA:BB:...`, for operators to pin or compare. */
  fingerprint256: string;
  /** When the (leaf) certificate expires. */
  notAfter: Date;
  selfSigned: boolean;
}

/** The secure-context options every TLS listener and every reload uses: TLS 1.2+, CIPHERS below. */
export function tlsContextOptions(material: TlsMaterial): { key: string; cert: string; minVersion: 'TLSv1.2'; ciphers: string; honorCipherOrder: true } {
  return { key: material.key, cert: material.cert, minVersion: 'TLSv1.2', ciphers: TLS_CIPHERS, honorCipherOrder: true };
}

/** Checks that `material` can serve, and describes it; throws with a reason naming neither file's content. */
export function describeTls(material: TlsMaterial, selfSigned: boolean): ResolvedTls {
  // Checked now, with a message naming the files: a key that does not match the certificate would
  // otherwise start a server whose every handshake fails, and a malformed one crash after model load.
  try {
    createSecureContext(tlsContextOptions(material));
  } catch (err) {
    const reason = (err as { code?: string; reason?: string }).reason ?? (err as { code?: string }).code ?? 'unusable';
    throw new Error(`the certificate and key cannot be used together: one is unreadable or the key does not fit (${reason})`);
  }
  const x509 = new X509Certificate(material.cert);
  return { ...material, fingerprint256: x509.fingerprint256, notAfter: new Date(x509.validTo), selfSigned };
}

/** The PEM files given by TLS_CERT_FILE / TLS_KEY_FILE, or a fresh self-signed certificate. */
export async function resolveTls(config: Pick<Config, 'TLS_CERT_FILE' | 'TLS_KEY_FILE'>): Promise<ResolvedTls> {
  let material: TlsMaterial;
  let selfSigned = false;
  if (config.TLS_CERT_FILE !== undefined && config.TLS_KEY_FILE !== undefined) {
    material = {
      cert: await readFile(config.TLS_CERT_FILE, 'utf8'),
      key: await readFile(config.TLS_KEY_FILE, 'utf8'),
    };
  } else {
    material = await selfSignedCertificate();
    selfSigned = true;
  }
  return describeTls(material, selfSigned);
}

/**
 * TLS 1.3's suites, and for TLS 1.2 only forward-secret AEAD ones (Mozilla's "intermediate" list,
 * without DHE): Node's default list would also take CBC-SHA1, ARIA, and RSA key exchange.
 */
export const TLS_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

export async function selfSignedCertificate(): Promise<TlsMaterial> {
  const name = hostname();
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: name }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 365 * 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: name },
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/**
 * Where a plain-HTTP request is sent: PUBLIC_HOST when configured, else the request's own host name,
 * on the HTTPS port, same path and query. Without PUBLIC_HOST only a syntactically plain host is
 * echoed (anything else gets no target), so a client can send only itself elsewhere; PUBLIC_HOST
 * takes the Host header out of the answer altogether.
 */
export function httpsLocation(hostHeader: string | undefined, url: string | undefined, httpsPort: number, publicHost?: string): string | undefined {
  // The Host's own port is dropped: it is the port the client spoke plain HTTP to.
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/.exec(hostHeader ?? '');
  const host = publicHost ?? m?.[1];
  if (host === undefined) return undefined;
  const port = httpsPort === 443 ? '' : `:${httpsPort}`;
  const path = url !== undefined && url.startsWith('/') && !url.startsWith('//') ? url : '/';
  return `https://${host}${port}${path}`;
}

/** Redirect answers depend on the request's Host: a shared cache must not keep one for others. */
export const REDIRECT_HEADERS = { 'cache-control': 'no-store' } as const;

/** Node's settings shared by every listener: its stalled-connection cuts and who answers a missing Host. */
export type NodeServerOptions = Required<Pick<ServerOptions, 'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout' | 'connectionsCheckingInterval' | 'requireHostHeader'>>;

/**
 * Node's own limits tied to REQUEST_TIMEOUT_MS: a stalled header block, body or TLS handshake is cut
 * at that time, and an idle keep-alive connection at KEEP_ALIVE_TIMEOUT_MS. Node checks them every
 * `connectionsCheckingInterval` (30 s by default, which let a 30 s timeout stretch to a minute), so the
 * check runs at least every second. A request without Host reaches the app (http/framing.ts), whose
 * refusal is a `{detail, code}`, not Node's empty 400.
 */
export function serverOptions(config: Pick<Config, 'REQUEST_TIMEOUT_MS' | 'KEEP_ALIVE_TIMEOUT_MS'>): NodeServerOptions {
  const timeoutMs = config.REQUEST_TIMEOUT_MS;
  return {
    headersTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(timeoutMs / 4))),
    requireHostHeader: false,
  };
}

/** A plain HTTP server whose only answer is 308 to HTTPS (400 when the Host header is unusable). */
export function createRedirectServer(httpsPort: number, options: NodeServerOptions, publicHost?: string): Server {
  // The same cuts for stalled and idle connections as the API port.
  const server = createServer(options, (req, res) => {
    const location = httpsLocation(req.headers.host, req.url, httpsPort, publicHost);
    if (location === undefined) {
      res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' }).end(errorBody({ code: 'host_required' }));
      return;
    }
    res.writeHead(308, { location, 'content-type': 'application/json; charset=utf-8', ...REDIRECT_HEADERS });
    res.end(errorBody({ code: 'use_https', params: { location } }));
  });
  server.keepAliveTimeout = options.keepAliveTimeout;
  // Bad framing, oversized headers and timeouts get the API port's {detail, code} answer, not Node's empty one.
  server.on('clientError', clientErrorHandler);
  server.on('checkExpectation', expectationHandler);
  return server;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export interface Listeners {
  /** Base URL of the app listener, e.g. https://127.0.0.1:8443. */
  appUrl: string;
  redirectPort: number | undefined;
  metricsPort: number | undefined;
  /** Stops accepting on every port, letting in-flight app requests finish. */
  close(): Promise<void>;
}

export interface ListenerOptions {
  app: FastifyInstance;
  metricsServer: FastifyInstance | undefined;
  config: Pick<Config, 'HOST' | 'PORT' | 'HTTP_PORT' | 'PUBLIC_HTTPS_PORT' | 'PUBLIC_HOST' | 'TLS_MODE' | 'METRICS_PORT' | 'METRICS_HOST' | 'REQUEST_TIMEOUT_MS' | 'KEEP_ALIVE_TIMEOUT_MS'>;
}

export async function startListeners({ app, metricsServer, config }: ListenerOptions): Promise<Listeners> {
  await app.listen({ host: config.HOST, port: config.PORT });
  const address = app.server.address();
  const appPort = typeof address === 'object' && address !== null ? address.port : config.PORT;
  const scheme = config.TLS_MODE === 'on' ? 'https' : 'http';

  // With TLS off the proxy in front owns the plain port and its redirect; a second one here would
  // send clients to a port that does not speak TLS.
  let redirect: Server | undefined;
  if (config.TLS_MODE === 'on' && config.HTTP_PORT > 0) {
    // Behind a published port or a Service, clients reach HTTPS on the public port, not the container's.
    redirect = createRedirectServer(config.PUBLIC_HTTPS_PORT ?? appPort, serverOptions(config), config.PUBLIC_HOST);
    await listen(redirect, config.HTTP_PORT, config.HOST);
  }
  let metricsPort: number | undefined;
  if (metricsServer !== undefined && config.METRICS_PORT > 0) {
    await metricsServer.listen({ host: config.METRICS_HOST, port: config.METRICS_PORT });
    const a = metricsServer.server.address();
    metricsPort = typeof a === 'object' && a !== null ? a.port : config.METRICS_PORT;
  }
  const r = redirect?.address();
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return {
    appUrl: `${scheme}://${host}:${appPort}`,
    redirectPort: typeof r === 'object' && r !== null ? r.port : undefined,
    metricsPort,
    async close() {
      const closeRedirect = new Promise<void>((resolve) => {
        if (redirect === undefined) return resolve();
        redirect.close(() => resolve());
        redirect.closeIdleConnections();
      });
      // Node closes keep-alive connections that are idle when closing starts, but one whose request
      // was in flight goes idle later and would hold close() open until its keep-alive timeout.
      const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
      try {
        // The app first and alone decides how long in-flight requests take; metrics stay up meanwhile.
        await Promise.all([app.close(), closeRedirect]);
      } finally {
        clearInterval(sweep);
      }
      await metricsServer?.close();
    },
  };
}
