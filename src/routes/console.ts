// GET /console: the review console (README "Review console"), a static page on the API listener.
// Public, like /health: the page holds no data and no key. Every call it makes goes to the API with
// the bearer key the reviewer types, so authentication, the per-key rate limit and the audit log apply
// as to any client. Nothing here reads a body or touches the scorer: the console is off the scoring
// path. Registered only with CONSOLE_ENABLED (default true); off, /console is the app's 404.
//
// The files in src/console/public/ are all it serves: index.html and console.css as written, and
// console.js built from console/src/ by `npm run build:console` (checked in; a test rebuilds it).
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { fileURLToPath } from 'node:url';

export const CONSOLE_PATH = '/console';

/** The folder served under /console/; a fixed set of files, listed once at start (no wildcard route). */
export const CONSOLE_ROOT = fileURLToPath(new URL('../console/public/', import.meta.url));

/**
 * Stricter than helmet's default for the rest of the app: nothing inline (no script, no style
 * attribute), nothing from another origin, API calls to this origin only, no forms posted anywhere
 * (the key is never submitted by the browser itself), no framing, and DOM sinks that parse HTML
 * refused (Trusted Types with no policy): the page writes text, never markup.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

function consoleHeaders(reply: FastifyReply): void {
  // Replaces helmet's app-wide policy (set on the raw response in its own onRequest hook).
  reply.raw.removeHeader('content-security-policy');
  reply.header('content-security-policy', CONSOLE_CSP);
  // The page works on an in-memory key only: nothing for the browser to keep from one session to the next.
  reply.header('cache-control', 'no-cache');
}

export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  // Encapsulated: these headers go on the console's answers only, its 404s included.
  app.addHook('onRequest', async (_request, reply) => consoleHeaders(reply));
  await app.register(fastifyStatic, {
    root: CONSOLE_ROOT,
    prefix: `${CONSOLE_PATH}/`,
    // Routes for the files present at start, nothing else: an unknown path is the app's own 404.
    wildcard: false,
    index: ['index.html'],
    dotfiles: 'ignore',
    cacheControl: false,
    acceptRanges: false,
  });
  // The address a reviewer types, without a redirect; the page names its assets by absolute path.
  app.get(CONSOLE_PATH, { schema: { hide: true } }, (_request, reply) => reply.sendFile('index.html'));
}
