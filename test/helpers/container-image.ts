// The appliance image as the container tests build it: the local Node 24 base image (from the Debian
// mirror, cached) and the real Dockerfile through the operator's scripts/container/build-image.sh.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const ROOT = path.resolve(import.meta.dirname, '../..');
/** The CLI the tests call directly; the scripts get it as CONTAINER_ENGINE. */
export const CLI = process.env.CONTAINER_CLI ?? 'podman';
export const BASE_IMAGE = process.env.CONTAINER_BASE_IMAGE ?? 'localhost/node24-bookworm-base';
export const IMAGE = process.env.CONTAINER_TEST_IMAGE ?? 'localhost/conversation-risk:test';
/** The labels build-image.sh is given. */
export const BUILD_LABELS = {
  VERSION: '0.0.0-test',
  REVISION: 'container-test',
  SOURCE: 'https://example.invalid/conversation-risk-appliance',
};
/** netavark runs iptables from the sbin directories, which a minimal PATH lacks. */
export const ENGINE_ENV = {
  ...process.env,
  PATH: `${process.env.PATH ?? ''}:/usr/local/sbin:/usr/sbin:/sbin`,
  CONTAINER_ENGINE: CLI,
};

/** The shipped model when it is in the tree, else the contract fixture (mounted or baked in). */
export const shippedModel = existsSync(path.join(ROOT, 'models/conversation-risk/manifest.json'));
export const FIXTURE_MODEL = path.join(ROOT, 'test/fixtures/contract-model');

/** Whether `bin --version` runs: the container tests skip, with a message, where it does not. */
export function hasCommand(bin: string): boolean {
  try {
    execFileSync(bin, ['--version'], { stdio: 'ignore', env: ENGINE_ENV, timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

let built: Promise<string> | undefined;

/**
 * Builds IMAGE (once per test file; layers are cached across files) and resolves with the build
 * script's summary line.
 */
export function buildAppImage(): Promise<string> {
  built ??= (async () => {
    // Base image: cached by the script, built from the Debian mirror when no registry is reachable.
    if (BASE_IMAGE === 'localhost/node24-bookworm-base') {
      await run(path.join(ROOT, 'scripts/container/build-base-image.sh'), [BASE_IMAGE], {
        cwd: ROOT,
        env: ENGINE_ENV,
        maxBuffer: 16 * 1024 * 1024,
      });
    }
    // The operator's build script: labels, the optional npm_ca secret, docker format for podman.
    const { stdout } = await run(path.join(ROOT, 'scripts/container/build-image.sh'), [IMAGE], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...ENGINE_ENV, BASE_IMAGE, ...BUILD_LABELS },
    });
    return stdout.trim();
  })();
  return built;
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  tlsProtocol: string | null;
  /** SHA-256 fingerprint of the server certificate, colon-separated hex (TLS only). */
  peerFingerprint256: string | null;
}

/** One request to a container's port published on 127.0.0.1 (HTTPS unless `tls: false`). */
export function request(
  port: number,
  pathName: string,
  opts: { method?: string; body?: unknown; key?: string; tls?: boolean; timeoutMs?: number } = {},
): Promise<Reply> {
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = {};
  if (payload !== undefined) headers['content-type'] = 'application/json';
  if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`;
  const client = opts.tls === false ? http : https;
  return new Promise((resolve, reject) => {
    const req = client.request(
      {
        host: '127.0.0.1',
        port,
        path: pathName,
        method: opts.method ?? (payload === undefined ? 'GET' : 'POST'),
        headers,
        // Self-signed certificates (the image's own, init-secrets.sh's): tests compare fingerprints.
        rejectUnauthorized: false,
        agent: false,
        timeout: opts.timeoutMs ?? 60_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const socket = res.socket as TLSSocket | null;
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            tlsProtocol: typeof socket?.getProtocol === 'function' ? socket.getProtocol() : null,
            peerFingerprint256:
              typeof socket?.getPeerCertificate === 'function' ? socket.getPeerCertificate().fingerprint256 : null,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout on ${pathName}`)));
    req.on('error', reject);
    req.end(payload);
  });
}
