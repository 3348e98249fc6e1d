// Property-based tests: random and mutated bodies at strict-body routes, random auth headers at the
// auth layer. Whatever comes in, the answer is never a 5xx and every error is the documented envelope.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { addRoute } from '../../src/http/route.js';
import { ERROR_CODES } from '../../src/shared/errors.js';
import { createTenant, createTenantWithToken, OPERATOR_SECRET, startTestApp, type TestApp } from '../helpers/app.js';

const CODES = new Set<string>(ERROR_CODES);
const WHOLE_BODY = new Set(['INVALID_JSON', 'INVALID_CONTENT_TYPE']);

const Step = Type.Object({ op: Type.String({ enum: ['goto', 'click', 'fill'] }), selector: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false });
const ProbeBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  check: Type.Object({ type: Type.Literal('flow'), steps: Type.Array(Step, { maxItems: 20 }) }, { additionalProperties: false }),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
}, { additionalProperties: false });

interface Target { method: 'POST' | 'PATCH' | 'PUT'; url: string; auth: Record<string, string>; valid: () => Record<string, unknown> }

/** The envelope rules every non-2xx answer obeys; `sent` is the body as sent, for the one fieldless 400. */
function assertEnvelope(res: LightMyRequestResponse, what: string, sent?: unknown): void {
  assert.ok(res.statusCode < 500, `${what} -> ${res.statusCode} ${res.body}`);
  if (res.statusCode < 300) return;
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8', what);
  const { error } = res.json() as { error: { code: string; message: string; field?: string } };
  assert.ok(CODES.has(error.code), `${what}: unknown code ${error.code}`);
  assert.equal(typeof error.message, 'string', what);
  if (sent === undefined || res.statusCode === 404 || WHOLE_BODY.has(error.code)) return;
  const emptyObject = typeof sent === 'object' && sent !== null && !Array.isArray(sent) && Object.keys(sent).length === 0;
  if (emptyObject && error.code === 'VALIDATION_FAILED') return;
  assert.ok(typeof error.field === 'string' && error.field.length > 0, `${what}: ${res.statusCode} without field: ${res.body}`);
}

const oddString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', '\u0000', '\uD800', '\u202E', '𝕂𝕖𝕖𝕡', '__proto__', 'constructor', 'prototype', 'a'.repeat(70_000)),
);
const oddKey = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', ''));
const wrongValue = fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), oddString, fc.array(fc.anything(), { maxLength: 3 }), fc.dictionary(oddKey, fc.anything(), { maxKeys: 3 }));

/** A deep, narrow nesting of arrays and objects. */
const deep = fc.integer({ min: 50, max: 400 }).map((depth) => {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { x: v };
  return v;
});

type Mutation = (body: Record<string, unknown>) => unknown;
/** Mutations of a valid body, applied at the top level or at a random nested object. */
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.nat().map((i): Mutation => (b) => { const keys = Object.keys(b); if (keys.length) delete b[keys[i % keys.length]!]; return b; }),
  fc.tuple(oddKey, fc.anything()).map(([k, v]): Mutation => (b) => { Object.defineProperty(b, k, { value: v, enumerable: true, writable: true, configurable: true }); return b; }),
  fc.tuple(fc.nat(), wrongValue).map(([i, v]): Mutation => (b) => { const keys = Object.keys(b); if (keys.length) b[keys[i % keys.length]!] = v; return b; }),
  fc.tuple(fc.nat(), deep).map(([i, v]): Mutation => (b) => { const keys = Object.keys(b); if (keys.length) b[keys[i % keys.length]!] = v; return b; }),
  fc.tuple(fc.nat(), oddString).map(([i, v]): Mutation => (b) => { const keys = Object.keys(b); if (keys.length) b[keys[i % keys.length]!] = v; return b; }),
  fc.constant<Mutation>(() => ({})),
);

function nestedObjects(value: unknown, out: Array<Record<string, unknown>> = []): Array<Record<string, unknown>> {
  if (Array.isArray(value)) value.forEach((v) => nestedObjects(v, out));
  else if (typeof value === 'object' && value !== null) {
    out.push(value as Record<string, unknown>);
    Object.values(value).forEach((v) => nestedObjects(v, out));
  }
  return out;
}

const mutatedBody = (valid: () => Record<string, unknown>) => fc.tuple(fc.array(fc.tuple(fc.nat(), mutation), { minLength: 1, maxLength: 3 })).map(([steps]) => {
  let body: unknown = valid();
  for (const [where, mutate] of steps) {
    const objects = nestedObjects(body);
    if (!objects.length) break;
    const target = objects[where % objects.length]!;
    const result = mutate(target);
    if (target === body) body = result;
  }
  return body;
});

const parsed = (text: string): unknown => { try { return JSON.parse(text); } catch { return undefined; } };

/** A raw payload: random JSON text, random values, or mutations of a valid body. */
const payload = (valid: () => Record<string, unknown>) => fc.oneof(
  { weight: 5, arbitrary: mutatedBody(valid).map((b) => JSON.stringify(b) ?? '') },
  { weight: 2, arbitrary: fc.anything({ withNullPrototype: true, withObjectString: true, maxDepth: 4 }).map((b) => JSON.stringify(b) ?? 'undefined') },
  { weight: 2, arbitrary: fc.json({ maxDepth: 4 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
).map((text) => ({ text, sent: parsed(text) }));

describe('fuzzing the HTTP layer', () => {
  let t: TestApp;
  let targets: Target[];
  let token: string;
  let orgSlug: string;
  const op = { authorization: `Bearer ${OPERATOR_SECRET}` };

  before(async () => {
    t = await startTestApp({
      extraRoutes: (app) => {
        addRoute(app, {
          method: 'POST', url: '/api/v1/fuzz-probe', auth: 'public', tags: ['probe'], summary: 'probe', body: ProbeBody,
          response: { 200: Type.Object({ ok: Type.Boolean() }) }, handler: async () => ({ ok: true }),
        });
        addRoute(app, {
          method: 'GET', url: '/api/v1/fuzz-scoped', auth: 'user', scope: 'targets:read', tags: ['probe'], summary: 'probe',
          response: { 200: Type.Object({ org: Type.String() }) }, handler: async (request) => ({ org: request.auth!.org!.slug }),
        });
      },
    });
    const account = (await createTenant(t)).accountId;
    const tenant = await createTenantWithToken(t);
    token = tenant.token;
    orgSlug = tenant.orgSlug;
    targets = [
      { method: 'POST', url: '/operator/regions', auth: op, valid: () => ({ id: `r${Math.random().toString(36).slice(2, 10)}`, name: 'Fuzz', city: 'Oslo', country_code: 'NO', latitude: 59.9, longitude: 10.7, enabled: false }) },
      { method: 'PATCH', url: '/operator/regions/local', auth: op, valid: () => ({ name: 'Local', city: null, latitude: 1.5, flow_capable: false }) },
      { method: 'PUT', url: `/operator/accounts/${account}/overrides`, auth: op, valid: () => ({ caps: { max_targets: 100 }, reason: 'fuzz', expires_at: null }) },
      { method: 'POST', url: '/api/v1/fuzz-probe', auth: {}, valid: () => ({ name: 'journey', check: { type: 'flow', steps: [{ op: 'goto' }, { op: 'click', selector: '#a' }] }, headers: { 'X-A': 'b' } }) },
    ];
  });
  after(async () => { await t.close(); });

  it('the valid bodies are accepted, so the mutations start from a passing request', async () => {
    for (const target of targets) {
      const res = await t.inject({ method: target.method, url: target.url, headers: { ...target.auth, 'content-type': 'application/json' }, payload: JSON.stringify(target.valid()) });
      assert.ok(res.statusCode < 300, `${target.method} ${target.url}: ${res.statusCode} ${res.body}`);
    }
  });

  it('random and mutated bodies at strict-body routes get a 4xx envelope or success, never a 5xx', async () => {
    for (const target of targets) {
      const seen = new Set<string>();
      await fc.assert(fc.asyncProperty(payload(target.valid), async ({ text, sent }) => {
        const res = await t.inject({ method: target.method, url: target.url, headers: { ...target.auth, 'content-type': 'application/json' }, payload: text });
        assertEnvelope(res, `${target.method} ${target.url} ${text.slice(0, 200)}`, sent);
        seen.add(res.statusCode < 300 ? 'ok' : `${res.statusCode} ${(res.json() as { error: { code: string } }).error.code}`);
      }), { numRuns: 400 });
      // The generators reach every layer: parsing, strictness, schema checks and the handler.
      for (const outcome of ['ok', '400 INVALID_JSON', '422 INVALID_JSON', '400 VALIDATION_FAILED']) {
        assert.ok(seen.has(outcome), `${target.method} ${target.url} never gave ${outcome}: ${[...seen].join(', ')}`);
      }
    }
  });

  it('random content types never reach a handler', async () => {
    const contentType = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/jsonx', 'json'));
    await fc.assert(fc.asyncProperty(contentType, fc.string({ maxLength: 50 }), async (type, body) => {
      const res = await t.inject({ method: 'POST', url: '/api/v1/fuzz-probe', headers: { 'content-type': type }, payload: body });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${JSON.stringify(type)} -> ${res.statusCode} ${res.body}`);
      assertEnvelope(res, `content-type ${JSON.stringify(type)}`);
    }), { numRuns: 300 });
  });

  it('random Authorization and X-Service-Org values get 401/400/403/404 envelopes, never a 5xx', async () => {
    const headerValue = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, '')),
      fc.string({ maxLength: 60 }).map((s) => `Bearer ${s}`),
      fc.constantFrom(`Bearer ${token}`, `bearer  ${token}`, `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, 'Bearer sm_live_', 'Bearer sm_live_' + 'A'.repeat(500), `Basic ${token}`, 'Bearer', `Bearer ${OPERATOR_SECRET}`),
    );
    const orgHeader = fc.option(fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom(orgSlug, orgSlug.toUpperCase(), 'other-org', '-', 'a'.repeat(200))), { nil: undefined });
    const url = fc.constantFrom('/api/v1/regions', '/api/v1/fuzz-scoped', '/operator/regions');
    await fc.assert(fc.asyncProperty(url, headerValue, orgHeader, async (path, authorization, org) => {
      const headers: Record<string, string> = { authorization };
      if (org !== undefined) headers['x-service-org'] = org;
      let res: LightMyRequestResponse;
      try {
        res = await t.inject({ method: 'GET', url: path, headers });
      } catch (err) {
        // Node refuses header values with control characters before they reach the server.
        if ((err as { code?: string }).code === 'ERR_INVALID_CHAR') return;
        throw err;
      }
      assertEnvelope(res, `${path} ${JSON.stringify(headers)}`);
      if (res.statusCode === 200) return;
      assert.ok([400, 401, 403, 404].includes(res.statusCode), `${path} ${JSON.stringify(headers)} -> ${res.statusCode}`);
      const { error } = res.json() as { error: { code: string; field?: string } };
      if (error.code.startsWith('ORG_HEADER')) assert.equal(error.field, 'X-Service-Org');
    }), { numRuns: 1000 });
  });
});
