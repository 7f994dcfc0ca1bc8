// The review console's route (src/routes/console.ts), without a browser: its files carry the strict
// CSP and need no key, the page holds nothing inline and names nothing of another origin, an unknown
// file or CONSOLE_ENABLED=false is the app's 404, the API keeps its own headers, the console stays out
// of the OpenAPI document, and the checked-in bundle is what console/src/ builds.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleConsole, CONSOLE_BUNDLE } from '../../scripts/console/build.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { CONSOLE_CSP, CONSOLE_ROOT } from '../../src/routes/console.ts';
import { bearer, REPO_ROOT, startTestApp, type TestApp } from '../helpers/app.ts';

const FILES: Array<[string, string]> = [
  ['/console', 'text/html; charset=utf-8'],
  ['/console/', 'text/html; charset=utf-8'],
  ['/console/index.html', 'text/html; charset=utf-8'],
  ['/console/console.js', 'application/javascript; charset=utf-8'],
  ['/console/console.css', 'text/css; charset=utf-8'],
  ['/console/favicon.svg', 'image/svg+xml'],
];

let t: TestApp;
let off: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  off = await startTestApp({ env: { CONSOLE_ENABLED: 'false' }, scorer: t.scorer });
});
afterAll(async () => {
  await off.close();
  await t.close();
});

describe('CONSOLE_ENABLED', () => {
  it('is on by default, off with false, and anything but a boolean stops the start naming it', () => {
    expect(loadConfig({}).CONSOLE_ENABLED).toBe(true);
    expect(loadConfig({ CONSOLE_ENABLED: 'false' }).CONSOLE_ENABLED).toBe(false);
    expect(loadConfig({ CONSOLE_ENABLED: '' }).CONSOLE_ENABLED).toBe(true);
    expect(() => loadConfig({ CONSOLE_ENABLED: 'maybe' })).toThrow(ConfigError);
    expect(() => loadConfig({ CONSOLE_ENABLED: 'maybe' })).toThrow(/CONSOLE_ENABLED must be boolean/);
  });
});

describe('GET /console and its files', () => {
  it.each(FILES)('%s: 200 without a key, the console CSP (once), nosniff, no rate-limit headers', async (url, type) => {
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(res.rawPayload.length).toBeGreaterThan(0);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['strict-transport-security']).toBeDefined();
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    // A key, even a wrong one, changes nothing: the page is public; its calls carry the key.
    const withKey = await t.app.inject({ method: 'GET', url, headers: bearer('not-a-key-at-all-0000') });
    expect(withKey.statusCode).toBe(200);
  });

  it('the policy allows nothing inline, nothing from another origin, and API calls to this origin only', () => {
    const directives = new Map(CONSOLE_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(directives.get('default-src')).toBe("'none'");
    expect(directives.get('script-src')).toBe("'self'");
    expect(directives.get('style-src')).toBe("'self'");
    expect(directives.get('connect-src')).toBe("'self'");
    expect(directives.get('form-action')).toBe("'none'");
    expect(directives.get('frame-ancestors')).toBe("'none'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe-|https?:|data:|blob:|\*/);
  });

  it('serves exactly the files of src/console/public, and an unknown one is the app 404', async () => {
    expect(readdirSync(CONSOLE_ROOT).sort()).toEqual(['console.css', 'console.js', 'favicon.svg', 'index.html']);
    for (const url of ['/console/nope.js', '/console/../package.json', '/console/%2e%2e/package.json', '/console/.env']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toEqual({ detail: 'Not found', code: 'not_found' });
    }
    // A served path asked with another method: 405 naming the methods it serves (issue 33).
    const post = await t.app.inject({ method: 'POST', url: '/console', payload: {} });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('the page holds no inline script, style or handler, and names only its own files', () => {
    const html = readFileSync(join(CONSOLE_ROOT, 'index.html'), 'utf8');
    expect(html).not.toMatch(/<style/i);
    expect(html).not.toMatch(/\sstyle\s*=/i);
    expect(html).not.toMatch(/\son[a-z]+\s*=/i);
    expect(html).not.toMatch(/javascript:/i);
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    expect(scripts).toHaveLength(1);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\/console\/console\.js"/);
      expect(body?.trim()).toBe('');
    }
    const references = [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
    expect(references.sort()).toEqual(['#main', '/console/console.css', '/console/console.js', '/console/favicon.svg']);
  });

  it('the style sheet and the script load nothing and call no other origin', () => {
    const css = readFileSync(join(CONSOLE_ROOT, 'console.css'), 'utf8');
    expect(css).not.toMatch(/@import|url\(|https?:/i);
    const js = readFileSync(join(CONSOLE_ROOT, 'console.js'), 'utf8');
    // The one URL in the bundle is the SVG namespace, a name rather than an address.
    expect([...js.matchAll(/https?:\/\/[^"'`\s)]*/g)].map((m) => m[0])).toEqual(['http://www.w3.org/2000/svg']);
    expect(js).not.toMatch(/localStorage|sessionStorage|indexedDB|document\.cookie|innerHTML|outerHTML|insertAdjacentHTML|eval\(|new Function/);
  });

  it('leaves the API its own headers: the console policy is on the console only', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/health' });
    expect(health.headers['content-security-policy']).toBeDefined();
    expect(health.headers['content-security-policy']).not.toBe(CONSOLE_CSP);
    const predict = await t.app.inject({ method: 'POST', url: '/v2/predict', headers: bearer(), payload: { messages: [{ user: 'user1', text: 'hi' }] } });
    expect(predict.statusCode).toBe(200);
    expect(predict.headers['content-security-policy']).not.toBe(CONSOLE_CSP);
  });

  it('is not part of the API document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
  });
});

describe('CONSOLE_ENABLED=false', () => {
  it.each(FILES.map(([url]) => url))('%s is the app 404', async (url) => {
    const res = await off.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'Not found', code: 'not_found' });
    expect(res.headers['content-security-policy']).not.toBe(CONSOLE_CSP);
  });

  it('changes nothing else: the API answers as before', async () => {
    const res = await off.app.inject({ method: 'POST', url: '/v2/predict', headers: bearer(), payload: { messages: [{ user: 'user1', text: 'hi' }] } });
    expect(res.statusCode).toBe(200);
  });
});

describe('the checked-in bundle', () => {
  it('is what console/src builds (npm run build:console)', async () => {
    expect(readFileSync(CONSOLE_BUNDLE, 'utf8'), 'src/console/public/console.js is stale: run npm run build:console').toBe(await bundleConsole());
  });

  it('ships in the image with no build step: the build context and COPY take src/, and what serves it is a production dependency', () => {
    const ignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    expect(ignore).toContain('!src/**');
    // Nothing after it leaves out the console's files (only test files are).
    const after = ignore.slice(ignore.indexOf('!src/**') + 1).filter((l) => l !== '' && !l.startsWith('#'));
    for (const pattern of after) expect(pattern, pattern).not.toMatch(/src\/console|\*\.(js|css|html|svg)$|^\*\*\/\*$/);
    const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^COPY src \.\/src$/m);
    expect(dockerfile).toContain('npm ci --omit=dev');
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(manifest.dependencies['@fastify/static']).toBeDefined();
    // The build tools stay out of the image.
    expect(manifest.devDependencies.esbuild).toBeDefined();
    expect(manifest.devDependencies['playwright-core']).toBeDefined();
  });
});
