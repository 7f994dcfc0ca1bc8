// A path the service serves, asked with a method it does not serve, answers 405 with `Allow` (RFC 9110,
// 15.5.6) rather than 404: a client that sent GET for POST learns what to send, and nothing is said
// that the public OpenAPI document does not already say.
import type { FastifyInstance } from 'fastify';

interface RouteMethods {
  pattern: RegExp;
  methods: Set<string>;
}

/** `/v2/predict/batch/:job_id` -> a regular expression matching its concrete paths. */
function patternOf(url: string): RegExp {
  const source = url
    .split(/(:[A-Za-z0-9_]+|\*)/)
    .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

/**
 * Records every route registered from now on (onRoute reaches the routes of child contexts too) and
 * returns what answers, for a path, the methods it is served with (none for an unknown path).
 */
export function trackRouteMethods(app: FastifyInstance): (url: string) => string[] {
  const routes = new Map<string, RouteMethods>();
  app.addHook('onRoute', (route) => {
    const entry = routes.get(route.url) ?? { pattern: patternOf(route.url), methods: new Set<string>() };
    for (const method of [route.method].flat()) entry.methods.add(method.toUpperCase());
    routes.set(route.url, entry);
  });
  return (url) => {
    const path = url.split('?', 1)[0] ?? url;
    const methods = new Set<string>();
    for (const { pattern, methods: served } of routes.values()) if (pattern.test(path)) for (const m of served) methods.add(m);
    return [...methods].sort();
  };
}
