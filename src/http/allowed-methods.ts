// Which methods a path under `/api/v1/` answers, from the routes as registered: `OPTIONS` on any
// such path answers them in `Allow` (authenticated and drawn from `api_reads_per_minute`, as
// service-api.md's rate budgets count OPTIONS among the reads), and a method the path does not take
// is 405 `METHOD_NOT_ALLOWED` with `Allow`, not 404 "route not found". Elsewhere (the operator
// surface above all, which must stay invisible) an unknown method is still 404.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../shared/errors.js';

const API_PREFIX = '/api/v1/';

interface RoutePattern { matches: RegExp; methods: Set<string> }

/** A router pattern as a regular expression over a concrete path: `:param` is one segment, `*` the rest. */
function patternRegExp(url: string): RegExp {
  const source = url.split('/').map((segment) => {
    if (segment === '*') return '.*';
    if (segment.startsWith(':')) return '[^/]+';
    return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }).join('/');
  return new RegExp(`^${source}$`);
}

export class AllowedMethods {
  private readonly patterns = new Map<string, RoutePattern>();

  /** `headToo`: the router answers HEAD where this route answers GET (unless the route turned that off). */
  add(url: string, methods: readonly string[], headToo = true): void {
    if (!url.startsWith(API_PREFIX) || url.includes('*')) return;
    const pattern = this.patterns.get(url) ?? { matches: patternRegExp(url), methods: new Set<string>() };
    for (const method of methods) pattern.methods.add(method);
    if (headToo && methods.includes('GET')) pattern.methods.add('HEAD');
    this.patterns.set(url, pattern);
  }

  /** The methods some route answers at `path` (query cut off), OPTIONS included when any; empty for none. */
  of(path: string): string[] {
    const methods = new Set<string>();
    for (const pattern of this.patterns.values()) {
      if (pattern.matches.test(path)) for (const method of pattern.methods) methods.add(method);
    }
    if (methods.size) methods.add('OPTIONS');
    return [...methods].sort();
  }
}

const pathOf = (url: string): string => url.split(/[?#]/, 1)[0]!;

/** Records every API route as it is registered; install before any route. */
export function installAllowedMethods(app: FastifyInstance): AllowedMethods {
  const allowed = new AllowedMethods();
  app.addHook('onRoute', (route) => allowed.add(route.url, ([] as string[]).concat(route.method), route.exposeHeadRoute !== false));
  return allowed;
}

/** `OPTIONS` on any API path: 204 with `Allow` after the token's checks and budget; 404 where no route is. */
export function registerOptionsRoute(app: FastifyInstance, allowed: AllowedMethods): void {
  app.route({
    method: 'OPTIONS', url: `${API_PREFIX}*`, config: { auth: 'user' }, schema: { hide: true },
    handler: async (request, reply) => {
      const methods = allowed.of(pathOf(request.url));
      if (!methods.length) throw new AppError(404, 'NOT_FOUND', 'route not found');
      return reply.code(204).header('allow', methods.join(', ')).send();
    },
  });
}

/** The error for a request no route took: 405 naming the methods when the API path exists, else 404. */
export function unroutedError(allowed: AllowedMethods, url: string): { error: AppError; allow?: string } {
  const path = pathOf(url);
  const methods = path.startsWith(API_PREFIX) ? allowed.of(path) : [];
  if (!methods.length) return { error: new AppError(404, 'NOT_FOUND', 'route not found') };
  return { error: new AppError(405, 'METHOD_NOT_ALLOWED', `this path answers ${methods.join(', ')}`), allow: methods.join(', ') };
}
