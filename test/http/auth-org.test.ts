// X-Service-Org rules (service-api.md "API token auth" 3) and tenant isolation of org resolution.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { addRoute } from '../../src/http/route.js';
import { bearer, createTenant, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

const TTL_SECS = 30;
const PROBE = '/api/v1/test-probe/org';
const MALFORMED = ['Bad_Slug', 'UPPER', '-leading', 'trailing-', 'a'.repeat(60), 'has space', 'dot.ted', '', 'ünï'];
const UNKNOWN = 'no-such-org-anywhere';

interface ErrorBody { error: { code: string; message: string; field?: string } }

describe('X-Service-Org', () => {
  let t: TestApp;
  let a: Tenant; // the caller
  let b: Tenant; // another tenant; A does not belong to its org
  let c: Tenant; // a third tenant whose org A has joined as a member
  let boundA: string;
  let unboundA: string;

  before(async () => {
    t = await startTestApp({
      config: { 'auth.token_cache_ttl_secs': TTL_SECS },
      extraRoutes: (app) => addRoute(app, {
        method: 'GET', url: PROBE, auth: 'user', scope: 'targets:read', tags: ['test'], summary: 'org probe',
        response: { 200: Type.Object({ org_id: Type.String(), org: Type.String(), account_id: Type.String() }) },
        handler: async (request) => {
          const org = request.auth!.org!;
          return { org_id: org.id, org: org.slug, account_id: org.accountId };
        },
      }),
    });
    [a, b, c] = [await createTenant(t), await createTenant(t), await createTenant(t)];
    await t.services.db.query(`INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'Member')`, [c.orgId, a.userId]);
    boundA = await createToken(t, a.userId, { orgId: a.orgId });
    unboundA = await createToken(t, a.userId);
  });
  after(async () => { await t.close(); });

  const probe = (token: string, org?: string) => t.inject({ method: 'GET', url: PROBE, headers: bearer(token, org) });

  function assertError(res: { statusCode: number; json(): unknown }, status: number, code: string): ErrorBody {
    const body = res.json() as ErrorBody;
    assert.equal(res.statusCode, status, JSON.stringify(body));
    assert.equal(body.error.code, code);
    return body;
  }

  it('bound token without the header acts in its org', async () => {
    const res = await probe(boundA);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { org_id: a.orgId, org: a.orgSlug, account_id: a.accountId });
  });

  it('bound token naming its own org acts in it', async () => {
    const res = await probe(boundA, a.orgSlug);
    assert.equal(res.statusCode, 200);
    assert.equal((res.json() as { org_id: string }).org_id, a.orgId);
  });

  it('bound token naming another org of the same user: 403 ORG_HEADER_MISMATCH', async () => {
    // A belongs to C's org: the unbound token proves the slug resolves for A.
    assert.equal((await probe(unboundA, c.orgSlug)).statusCode, 200);
    const body = assertError(await probe(boundA, c.orgSlug), 403, 'ORG_HEADER_MISMATCH');
    assert.equal(body.error.field, 'X-Service-Org');
  });

  it('unbound token without the header: 400 ORG_REQUIRED, naming the header', async () => {
    assert.equal(assertError(await probe(unboundA), 400, 'ORG_REQUIRED').error.field, 'X-Service-Org');
  });

  it('unbound token acts in whichever of its user\'s orgs the header names', async () => {
    assert.deepEqual((await probe(unboundA, a.orgSlug)).json(), { org_id: a.orgId, org: a.orgSlug, account_id: a.accountId });
    assert.deepEqual((await probe(unboundA, c.orgSlug)).json(), { org_id: c.orgId, org: c.orgSlug, account_id: c.accountId });
  });

  it('a malformed slug is 400 ORG_HEADER_INVALID for either kind of token', async () => {
    for (const token of [boundA, unboundA]) {
      for (const slug of MALFORMED) {
        const body = assertError(await probe(token, slug), 400, 'ORG_HEADER_INVALID');
        assert.equal(body.error.field, 'X-Service-Org');
      }
    }
  });

  it('an unknown slug is 400 ORG_HEADER_INVALID for either kind of token', async () => {
    for (const token of [boundA, unboundA]) {
      const body = assertError(await probe(token, UNKNOWN), 400, 'ORG_HEADER_INVALID');
      assert.equal(body.error.field, 'X-Service-Org');
    }
  });

  it('a bound token naming another tenant\'s org: 403 ORG_HEADER_MISMATCH (it must name its own org)', async () => {
    const body = assertError(await probe(boundA, b.orgSlug), 403, 'ORG_HEADER_MISMATCH');
    assert.equal(body.error.field, 'X-Service-Org');
  });

  it('an unbound token naming another tenant\'s org is indistinguishable from an unknown one', async () => {
    const foreign = await probe(unboundA, b.orgSlug);
    const unknown = await probe(unboundA, UNKNOWN);
    assertError(foreign, 400, 'ORG_HEADER_INVALID');
    assert.deepEqual(JSON.parse(foreign.body.replaceAll(b.orgSlug, '<slug>')), JSON.parse(unknown.body.replaceAll(UNKNOWN, '<slug>')));
  });

  it('tenants never see each other\'s org', async () => {
    const boundB = await createToken(t, b.userId, { orgId: b.orgId });
    const unboundB = await createToken(t, b.userId);
    assert.equal((await probe(boundB)).json<{ org_id: string }>().org_id, b.orgId);
    for (const slug of [a.orgSlug, c.orgSlug]) {
      assertError(await probe(boundB, slug), 403, 'ORG_HEADER_MISMATCH');
      assertError(await probe(unboundB, slug), 400, 'ORG_HEADER_INVALID');
    }
    // B's tokens cannot reach A's org through a path-named org either.
    for (const headers of [bearer(boundB), bearer(unboundB, b.orgSlug)]) {
      assertError(await t.inject({ method: 'GET', url: `/api/v1/orgs/${a.orgId}/usage`, headers }), 404, 'NOT_FOUND');
    }
  });

  it('a bound token whose user left the org no longer authenticates (after the cache TTL)', async () => {
    const d = await createTenant(t);
    const bound = await createToken(t, d.userId, { orgId: d.orgId });
    const unbound = await createToken(t, d.userId);
    assert.equal((await probe(bound)).statusCode, 200);
    await t.services.db.query('DELETE FROM memberships WHERE org_id = $1 AND user_id = $2', [d.orgId, d.userId]);
    t.clock.advance(TTL_SECS * 1000 + 1000);
    assertError(await probe(bound), 401, 'UNAUTHENTICATED');
    assertError(await probe(bound, d.orgSlug), 401, 'UNAUTHENTICATED');
    for (const url of ['/api/v1/me', '/api/v1/regions']) {
      assertError(await t.inject({ method: 'GET', url, headers: bearer(bound) }), 401, 'UNAUTHENTICATED');
    }
    // The unbound token still authenticates; the org it left is now unknown to it.
    assertError(await probe(unbound, d.orgSlug), 400, 'ORG_HEADER_INVALID');
    assertError(await t.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(unbound, d.orgSlug) }), 400, 'ORG_HEADER_INVALID');
  });

  describe('on routes that do not act in an org', () => {
    const ORG_FREE = ['/api/v1/me', '/api/v1/me/usage', '/api/v1/regions'];
    const get = (url: string, token: string, org?: string) => t.inject({ method: 'GET', url, headers: bearer(token, org) });
    const usageOf = (org: Tenant) => `/api/v1/orgs/${org.orgId}/usage`;

    it('apply the same header rules as every other route', async () => {
      for (const url of [...ORG_FREE, usageOf(a)]) {
        assertError(await get(url, boundA, c.orgSlug), 403, 'ORG_HEADER_MISMATCH');
        assertError(await get(url, boundA, b.orgSlug), 403, 'ORG_HEADER_MISMATCH');
        for (const token of [boundA, unboundA]) {
          assertError(await get(url, token, 'Bad_Slug'), 400, 'ORG_HEADER_INVALID');
          assertError(await get(url, token, UNKNOWN), 400, 'ORG_HEADER_INVALID');
        }
        assertError(await get(url, unboundA, b.orgSlug), 400, 'ORG_HEADER_INVALID');
        assertError(await get(url, unboundA), 400, 'ORG_REQUIRED');
        assert.equal((await get(url, boundA)).statusCode, 200, url);
        assert.equal((await get(url, boundA, a.orgSlug)).statusCode, 200, url);
        assert.equal((await get(url, unboundA, a.orgSlug)).statusCode, 200, url);
      }
    });

    it('a path-named org keeps its own checks: a member reads it through any of its orgs, others get 404', async () => {
      assert.equal((await get(usageOf(c), unboundA, c.orgSlug)).statusCode, 200);
      assert.equal((await get(usageOf(c), unboundA, a.orgSlug)).statusCode, 200, 'the path names the org read');
      assertError(await get(usageOf(c), boundA), 404, 'NOT_FOUND');
      assertError(await get(usageOf(b), unboundA, a.orgSlug), 404, 'NOT_FOUND');
    });

    it('document X-Service-Org and its errors in OpenAPI', async () => {
      const doc = (await t.inject({ method: 'GET', url: '/api/openapi.json' })).json() as {
        paths: Record<string, { get: { parameters?: Array<{ in: string; name: string }>; responses: Record<string, unknown> } }>;
      };
      for (const path of ['/api/v1/me', '/api/v1/regions', '/api/v1/orgs/{id}/usage']) {
        const op = doc.paths[path]!.get;
        assert.ok(op.parameters?.some((p) => p.in === 'header' && p.name === 'x-service-org'), path);
        assert.ok(op.responses['400'] && op.responses['403'], path);
      }
    });
  });

  it('a bound token whose org was deleted no longer authenticates (after the cache TTL)', async () => {
    const e = await createTenant(t);
    const bound = await createToken(t, e.userId, { orgId: e.orgId });
    assert.equal((await probe(bound)).statusCode, 200);
    await t.services.db.query('UPDATE orgs SET deleted_at = $2 WHERE id = $1', [e.orgId, t.clock.now()]);
    t.clock.advance(TTL_SECS * 1000 + 1000);
    assertError(await probe(bound), 401, 'UNAUTHENTICATED');
  });
});
