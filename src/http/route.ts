// One way to declare a route: its auth, scope, schemas and documented errors in one place,
// so validation, serialization and the OpenAPI document cannot drift apart.
import { Type, type Static, type TArray, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { Scope } from '../identity/scopes.js';
import { AppError, ERROR_CODES } from '../shared/errors.js';
import { isUuid } from '../shared/ids.js';
import { MUTATIONS } from './conventions.js';
import { unknownKeyError } from './validation.js';
import type { RouteAuth } from './route-config.js';

export const ErrorSchema = Type.Object({
  error: Type.Object({
    code: Type.String({ enum: [...ERROR_CODES] }),
    message: Type.String(),
    field: Type.Optional(Type.String({ description: 'The input at fault, as a path such as `check.steps[1].selector`.' })),
    quota: Type.Optional(Type.String({ description: 'With QUOTA_EXCEEDED: the plan column.' })),
    allowed: Type.Optional(Type.Array(Type.String(), { description: 'With an unknown key: the keys its object accepts.' })),
  }),
}, { $id: 'Error', description: 'The error envelope of every 4xx and 5xx answer.' });

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid input (`VALIDATION_FAILED`, `INVALID_JSON` or a domain code) with `field`.',
  401: '`UNAUTHENTICATED` (missing, malformed, unknown, revoked or expired token) or `TOKEN_AUDIENCE`.',
  403: '`INSUFFICIENT_SCOPE`, `ORG_HEADER_MISMATCH` or a plan feature that is off.',
  404: '`NOT_FOUND`: unknown route, unknown or foreign id.',
  409: 'Conflict with the current state.',
  413: 'Too many items or too large a body.',
  415: '`INVALID_CONTENT_TYPE`: the body must be `application/json`, uncompressed (no `Content-Encoding` but `identity`).',
  422: '`INVALID_JSON` for an unknown or read-only key (with `field` and `allowed`), `QUOTA_EXCEEDED` (with `quota`), or a domain code.',
  429: '`RATE_LIMITED`: a rate limit is used up (the plan\'s rate budget, or one the route describes, such as a ping URL\'s); see `Retry-After`.',
  503: '`SERVICE_UNAVAILABLE`: a dependency (the store) is unreachable.',
};

/** The request as a handler sees it: body, query and params typed by their schemas. */
type Req<B extends TSchema, Q extends TSchema, P extends TSchema> =
  Omit<FastifyRequest, 'body' | 'query' | 'params'> & { body: Static<B>; query: Static<Q>; params: Static<P> };

export interface RouteSpec<B extends TSchema, Q extends TSchema, P extends TSchema> {
  method: HTTPMethods;
  url: string;
  auth: RouteAuth;
  scope?: Scope;
  /** `user` routes act inside one org unless this is false. */
  orgScoped?: boolean;
  summary: string;
  description?: string;
  tags: string[];
  body?: B;
  querystring?: Q;
  params?: P;
  /** Success responses by status. */
  response: Record<number, TSchema | null>;
  /** The route honours `Idempotency-Key` (documented as a header parameter; idempotency.ts checks it). */
  idempotencyKey?: boolean;
  /**
   * A create: the handler returns the new resource, answered 201 with `Location: {location}/{id}`
   * (the header documented on the 201).
   */
  location?: string;
  /** Error statuses beyond the ones implied by auth and input. */
  errors?: number[];
  bodyLimit?: number;
  /** Whether a GET route also answers HEAD (Fastify's default); off where a GET has an effect. */
  exposeHeadRoute?: boolean;
  /**
   * Runs after auth and before the body is validated: for a rule whose code the spec names and that
   * must answer before the schema would (e.g. the wrong kind of monitor). Sees the body unvalidated.
   */
  beforeValidation?: (request: FastifyRequest) => Promise<void>;
  /** Runs as the request arrives, after auth and before its body is read: for a route whose answer no body can change. */
  onArrival?: (request: FastifyRequest) => Promise<void>;
  handler: (request: Req<B, Q, P>, reply: FastifyReply) => Promise<unknown>;
}

export function addRoute<B extends TSchema = TSchema, Q extends TSchema = TSchema, P extends TSchema = TSchema>(app: FastifyInstance, spec: RouteSpec<B, Q, P>): void {
  const errors = new Set(spec.errors ?? []);
  if (spec.body || spec.querystring) errors.add(400);
  if (spec.body) { errors.add(415); errors.add(422); }
  // Any API or operator mutation, with a body schema or without (then it takes none or `{}`,
  // conventions.ts): a body that is not JSON, too large, or holding a key the route does not take.
  if (spec.auth !== 'public' && MUTATIONS.has(spec.method as string)) for (const status of [400, 413, 415, 422]) errors.add(status);
  // Every `user` route applies the X-Service-Org rules: 400 ORG_REQUIRED / ORG_HEADER_INVALID, 403 ORG_HEADER_MISMATCH.
  if (spec.auth === 'user') { errors.add(400); errors.add(401); errors.add(403); errors.add(429); }
  if (spec.auth === 'operator' || spec.params) errors.add(404);

  const response: Record<number, unknown> = {};
  for (const [status, schema] of Object.entries(spec.response)) {
    response[Number(status)] = schema ?? { type: 'null', description: 'No content.' };
  }
  if (spec.location !== undefined) response[201] = { ...spec.response[201], headers: LOCATION };
  // A status the route documents itself (an HTML page's 404) keeps its own answer.
  for (const status of [...errors].sort()) response[status] ??= { $ref: 'Error#', description: ERROR_TEXT[status] ?? 'Error.', ...(status === 429 && { headers: RETRY_AFTER }) };

  app.route({
    method: spec.method,
    url: spec.url,
    bodyLimit: spec.bodyLimit,
    ...(spec.exposeHeadRoute === false && { exposeHeadRoute: false }),
    ...((spec.params || spec.beforeValidation) && {
      preValidation: [...(spec.params ? [canonicalIds] : []), ...(spec.beforeValidation ? [keyRulesFirst(spec.beforeValidation, spec.body)] : [])],
    }),
    ...(spec.onArrival && { onRequest: spec.onArrival }),
    // fast-json-stringify picks a oneOf branch by running a validator per value: for a list of
    // 1,000 monitors that is most of the request. Such answers come from one mapper per resource
    // (toTarget, ...) that builds exactly the documented shape, so plain JSON.stringify is as exact.
    ...(Object.values(spec.response).some(hasDiscriminator) && { serializerCompiler: () => plainJson }),
    config: { auth: spec.auth, scope: spec.scope, orgScoped: spec.orgScoped },
    schema: {
      operationId: operationIdOf(spec.method as string, spec.url),
      summary: spec.summary,
      description: describe(spec),
      tags: spec.tags,
      ...(spec.auth === 'user' && { security: [{ apiToken: spec.scope ? [spec.scope] : [] }] }),
      ...(spec.auth === 'operator' && { security: [{ operatorSecret: [] }] }),
      ...(spec.auth === 'user' && { headers: spec.idempotencyKey ? Type.Composite([OrgHeader, IdempotencyHeader]) : spec.orgScoped === false ? OrgFreeHeader : OrgHeader }),
      ...(spec.body && { body: spec.body }),
      ...(spec.querystring && { querystring: spec.querystring }),
      ...(spec.params && { params: spec.params }),
      response,
    },
    handler: (spec.location === undefined ? spec.handler : answerCreated(spec.location, spec.handler)) as unknown as (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
  });
}

/** A UUID in a path is read in any case and answered as stored, lower case (an echoed id is spelled one way). */
async function canonicalIds(request: FastifyRequest): Promise<void> {
  const params = request.params as Record<string, unknown>;
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === 'string' && isUuid(value)) params[key] = value.toLowerCase();
  }
}

/**
 * A rule checked before the body's schema (a kind's interval, a fixed kind) still loses to an
 * unknown or read-only key in the body, which Conventions 7 names first; its 403s and 404s stand.
 */
function keyRulesFirst(rule: (request: FastifyRequest) => Promise<void>, body: TSchema | undefined) {
  return async (request: FastifyRequest): Promise<void> => {
    try {
      await rule(request);
    } catch (err) {
      const invalidInput = err instanceof AppError && (err.status === 400 || err.status === 422);
      throw (invalidInput && body && unknownKeyError(body, request.body)) || err;
    }
  };
}

function answerCreated<R>(location: string, handler: (request: R, reply: FastifyReply) => Promise<unknown>) {
  return async (request: R, reply: FastifyReply) => {
    const created = await handler(request, reply) as { id: string };
    return reply.code(201).header('location', `${location}/${created.id}`).send(created);
  };
}

const plainJson = (data: unknown): string => JSON.stringify(data);

const LOCATION = { Location: { type: 'string', description: 'The path of the created resource.' } };
const RETRY_AFTER = { 'Retry-After': { type: 'integer', minimum: 1, description: 'Seconds until a retry can succeed.' } };

/**
 * A name for the operation from its method and path, unique as they are:
 * `POST /api/v1/targets/:id/check-now` is `postTargetsByIdCheckNow`.
 */
export function operationIdOf(method: string, url: string): string {
  const words = url.replace(/^\/api\/v1(?=\/|$)/, '').split(/[/.\-_]+/).filter(Boolean)
    .map((part) => (part.startsWith(':') ? `By${capital(part.slice(1))}` : capital(part)));
  return method.toLowerCase() + words.join('');
}

const capital = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/** Whether a schema holds a tagged union anywhere inside it. */
function hasDiscriminator(schema: unknown): boolean {
  if (schema === null || typeof schema !== 'object') return false;
  if (Array.isArray(schema)) return schema.some(hasDiscriminator);
  return 'discriminator' in schema || Object.values(schema).some(hasDiscriminator);
}

const ORG_HEADER_RULES = 'Optional for a token bound to an org (must then name it, else 403 `ORG_HEADER_MISMATCH`); required otherwise (400 `ORG_REQUIRED`). An unknown or malformed slug is 400 `ORG_HEADER_INVALID`.';
const OrgHeader = Type.Object({
  'x-service-org': Type.Optional(Type.String({ description: `Slug of the org to act in. ${ORG_HEADER_RULES}` })),
});
const IdempotencyHeader = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: '1-255 visible ASCII characters, kept 24 hours per org: a retry with the same key and request answers the first answer again; with another request it is 409 `CONFLICT` (a malformed key is 400 naming `Idempotency-Key`).' })),
});
const OrgFreeHeader = Type.Object({
  'x-service-org': Type.Optional(Type.String({ description: `Slug of one of the caller's orgs. This route acts in no org, but the header rules hold here too: ${ORG_HEADER_RULES}` })),
});

function describe(spec: { description?: string; auth: RouteAuth; scope?: Scope }): string {
  const lines = [spec.description ?? ''];
  if (spec.auth === 'user') lines.push(`Requires an API token${spec.scope ? ` with scope \`${spec.scope}\`` : ''}.`);
  if (spec.auth === 'operator') lines.push('Operator surface: `Authorization: Bearer <operator.secret>`; 404 without it.');
  if (spec.auth === 'public') lines.push('No authentication.');
  return lines.filter(Boolean).join('\n\n');
}

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** The largest `offset` a list takes: exact in JSON and JavaScript, and within PostgreSQL's bigint (past it, a 500). */
export const MAX_OFFSET = Number.MAX_SAFE_INTEGER;

export const Pagination = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0 })),
};

/** A page of a list (CONTRACT.md, "Lists"): `{<plural>: [...], total, limit, offset}`. */
export function listOf<K extends string, T extends TSchema>(plural: K, item: T, options: { order?: string; total?: string } = {}) {
  const items = { [plural]: Type.Array(item, { ...(options.order && { description: options.order }) }) } as { [P in K]: TArray<T> };
  return Type.Object({
    ...items,
    total: Type.Integer({ minimum: 0, ...(options.total && { description: options.total }) }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  });
}
