// REST conventions of monitoring-api.md: JSON content type on bodies, Cache-Control by method and route.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../shared/errors.js';

export const MUTATIONS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_TYPE = /^application\/json\s*(;|$)/i;
const PRIVATE_VARY = 'Authorization, Cookie, X-Service-Org';

/** Conventions 6: every /api/v1 response; operator responses are never cached either. */
export function cacheControlFor(method: string, url: string): string | undefined {
  const path = url.split('?', 1)[0]!;
  if (path === '/operator' || path.startsWith('/operator/')) return 'no-store';
  if (path !== '/api/v1' && !path.startsWith('/api/v1/')) return undefined;
  if (MUTATIONS.has(method)) return 'no-store';
  if (path === '/api/v1/dashboard/summary') return 'private, max-age=5';
  return 'private, max-age=10';
}

async function requireJsonBody(request: FastifyRequest): Promise<void> {
  if (!JSON_TYPE.test(request.headers['content-type'] ?? '')) {
    throw new AppError(415, 'INVALID_CONTENT_TYPE', 'send the body as Content-Type: application/json');
  }
}

/** A route that documents no body takes none, or `{}`. */
async function refuseUnexpectedBody(request: FastifyRequest): Promise<void> {
  const value = request.body;
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError(400, 'INVALID_JSON', 'this endpoint takes no body; send none, or {}');
  }
  const [key] = Object.keys(value);
  if (key !== undefined) throw new AppError(422, 'INVALID_JSON', `unknown key "${key}"; this endpoint takes no body (send none, or {})`, { field: key, allowed: [] });
}

/**
 * Where valid JSON holds a key Fastify's parser refuses (`__proto__`, or `prototype` inside
 * `constructor`), as a field path; undefined for text that is not JSON. Only on a refused body.
 */
export function prototypeKeyOf(text: string): string | undefined {
  let parsed: unknown;
  try {
    // JSON.parse makes `__proto__` an own key, so walking the result is safe.
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const find = (value: unknown, path: string): string | undefined => {
    if (typeof value !== 'object' || value === null) return undefined;
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) {
        const found = find(item, `${path}[${i}]`);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    for (const [key, child] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (key === '__proto__') return at;
      if (key === 'constructor' && typeof child === 'object' && child !== null && Object.hasOwn(child, 'prototype')) return `${at}.prototype`;
      const found = find(child, at);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return find(parsed, '');
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

export function installConventions(app: FastifyInstance): void {
  // Fastify parses text/plain by default; the API takes JSON only, anything else is 415.
  app.removeContentTypeParser('text/plain');

  // Clients often send `Content-Type: application/json` on a bodiless GET or DELETE: a route that takes
  // no body ignores an empty one. Everything else goes to Fastify's parser, which refuses a key that
  // could reach an object's prototype; that refusal names the key, as an unknown key's does.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
    // No content coding is decoded: a compressed body would read as bytes that are not JSON, and one
    // labelled compressed but sent plain would be taken at a word it did not keep (RFC 9110 15.5.16).
    const coding = request.headers['content-encoding']?.trim().toLowerCase();
    if (coding && coding !== 'identity') {
      return done(new AppError(415, 'INVALID_CONTENT_TYPE', `Content-Encoding ${coding} is not accepted: send the body uncompressed`), undefined);
    }
    // JSON is UTF-8 (RFC 8259): a body that is not is refused, not stored with U+FFFD in its place.
    let body: string;
    try {
      body = STRICT_UTF8.decode(raw as Buffer);
    } catch {
      return done(new AppError(400, 'INVALID_JSON', 'the body is not valid UTF-8'), undefined);
    }
    if (body === '' && !request.routeOptions.schema?.body) return done(null, undefined);
    return parseJson(request, body, (err, value) => {
      const field = err ? prototypeKeyOf(body) : undefined;
      if (field === undefined) return done(err, value);
      done(new AppError(422, 'INVALID_JSON', `key "${field.slice(field.lastIndexOf('.') + 1)}" is not accepted in any object: it could reach the object's prototype`, { field }), undefined);
    });
  });

  // A mutation with a body schema needs a JSON body, also when the client sent none at all; one
  // without takes none or `{}`, and any key sent to it is refused like any unknown key
  // (Conventions 7), after its path is validated (a malformed id is 404 first). Attached to those
  // routes alone, so reads pay nothing for it.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => MUTATIONS.has(m))) return;
    if (route.schema?.body) {
      const existing = route.preValidation ? [route.preValidation].flat() : [];
      route.preValidation = [requireJsonBody, ...existing];
    } else {
      const existing = route.preHandler ? [route.preHandler].flat() : [];
      route.preHandler = [refuseUnexpectedBody, ...existing];
    }
  });

  // Response headers are set as the request arrives, so every answer carries them, errors included.
  // A synchronous callback hook: no promise per request on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // The matched route's pattern, not the raw target: an escaped or absolute-form path names the same route.
    const value = cacheControlFor(request.method, request.routeOptions.url ?? request.url);
    if (value) reply.header('cache-control', value);
    // A read kept by a browser's cache is one caller's, in one org: another token, session or org header must not be served it.
    if (value?.startsWith('private')) reply.header('vary', PRIVATE_VARY);
    done();
  });
}
