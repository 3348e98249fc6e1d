// Bearer token authentication over HTTP (service-api.md "API token auth"; CONTRACT.md auth failures).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { addRoute } from '../../src/http/route.js';
import type { Scope } from '../../src/identity/scopes.js';
import { bearer, createTenant, createTenantWithToken, createToken, startTestApp, type TestApp } from '../helpers/app.js';

const TTL_SECS = 30;
const DAY_MS = 86_400_000;
const PROBES: Scope[] = ['targets:read', 'targets:write', 'targets:delete', 'targets:execute', 'channels:read'];

function mountScopeProbes(app: FastifyInstance): void {
  for (const scope of PROBES) {
    addRoute(app, {
      method: 'GET', url: `/api/v1/test-probe/${scope.replace(':', '/')}`, auth: 'user', scope, tags: ['test'],
      summary: `probe needing ${scope}`,
      response: { 200: Type.Object({ org: Type.String(), user: Type.String() }) },
      handler: async (request) => ({ org: request.auth!.org!.slug, user: request.auth!.userId }),
    });
  }
}

const probeUrl = (scope: Scope): string => `/api/v1/test-probe/${scope.replace(':', '/')}`;
const URLS = ['/api/v1/regions', '/api/v1/me', probeUrl('targets:read')];

/** `sm_live_` + 43 base64url characters: the shape of a real token. */
const randomTokenString = (): string => `sm_live_${randomBytes(32).toString('base64url')}`;

function assertError(res: { statusCode: number; json(): unknown }, status: number, code: string): void {
  assert.equal(res.statusCode, status, JSON.stringify(res.json()));
  const body = res.json() as { error: Record<string, unknown> };
  assert.deepEqual(Object.keys(body), ['error']);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok((body.error.message as string).length > 0);
}

describe('API token authentication', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ config: { 'auth.token_cache_ttl_secs': TTL_SECS }, extraRoutes: mountScopeProbes });
  });
  after(async () => { await t.close(); });

  const get = (url: string, headers: Record<string, string> = {}) => t.inject({ method: 'GET', url, headers });

  it('a valid token reaches every kind of route', async () => {
    const tenant = await createTenantWithToken(t);
    for (const url of URLS) assert.equal((await get(url, bearer(tenant.token))).statusCode, 200, url);
    const me = (await get('/api/v1/me', bearer(tenant.token))).json() as { id: string; token: { org_id: string } };
    assert.equal(me.id, tenant.userId);
    assert.equal(me.token.org_id, tenant.orgId);
  });

  it('401 UNAUTHENTICATED without an Authorization header, with the bare error envelope', async () => {
    for (const url of URLS) {
      const res = await get(url);
      assertError(res, 401, 'UNAUTHENTICATED');
      assert.deepEqual(Object.keys((res.json() as { error: object }).error).sort(), ['code', 'message']);
      assert.match(res.headers['content-type'] as string, /^application\/json/);
    }
  });

  it('401 UNAUTHENTICATED for a scheme other than Bearer', async () => {
    const { token } = await createTenantWithToken(t);
    for (const authorization of [`Basic ${Buffer.from(`x:${token}`).toString('base64')}`, `Token ${token}`, token, 'Bearer', 'Bearer ', `Bearer ${token} extra`]) {
      for (const url of URLS) assertError(await get(url, { authorization }), 401, 'UNAUTHENTICATED');
    }
  });

  it('401 UNAUTHENTICATED for two Authorization headers, even both valid (a proxy may read the other one)', async () => {
    const a = await createTenantWithToken(t);
    const b = await createTenantWithToken(t);
    for (const url of URLS) assertError(await get(url, { authorization: [`Bearer ${a.token}`, `Bearer ${b.token}`] as unknown as string }), 401, 'UNAUTHENTICATED');
    assert.equal((await get(URLS[0]!, bearer(a.token))).statusCode, 200, 'one is fine');
  });

  it('401 UNAUTHENTICATED for a malformed token', async () => {
    const { token } = await createTenantWithToken(t);
    const malformed = [
      'sm_live_short', token.slice(0, -1), `${token}A`, token.replace('sm_live_', 'sm_test_'), token.replace('sm_live_', 'sm_agent_'),
      `sm_live_${'!'.repeat(43)}`, 'x'.repeat(51), token.toUpperCase(),
    ];
    for (const raw of malformed) {
      for (const url of URLS) assertError(await get(url, bearer(raw)), 401, 'UNAUTHENTICATED');
    }
  });

  it('401 UNAUTHENTICATED for an unknown token of the right shape', async () => {
    for (const url of URLS) assertError(await get(url, bearer(randomTokenString())), 401, 'UNAUTHENTICATED');
  });

  it('a real prefix with a wrong tail is refused, also while the real token is cached', async () => {
    const { token } = await createTenantWithToken(t);
    const forged = token.slice(0, 16) + randomBytes(32).toString('base64url').slice(0, token.length - 16);
    assert.equal(forged.length, token.length);
    assert.notEqual(forged, token);
    assertError(await get('/api/v1/me', bearer(forged)), 401, 'UNAUTHENTICATED');
    // Cache the real token, then try the forgery again: the cache is keyed by the whole token.
    assert.equal((await get('/api/v1/me', bearer(token))).statusCode, 200);
    for (const url of URLS) assertError(await get(url, bearer(forged)), 401, 'UNAUTHENTICATED');
    // A forgery differing only in the last character.
    const last = token.at(-1) === 'A' ? 'B' : 'A';
    assertError(await get('/api/v1/me', bearer(token.slice(0, -1) + last)), 401, 'UNAUTHENTICATED');
    assert.equal((await get('/api/v1/me', bearer(token))).statusCode, 200);
  });

  it('a revoked token is refused; a cached one at the latest once the cache TTL has passed', async () => {
    const tenant = await createTenant(t);
    const never = await createToken(t, tenant.userId, { orgId: tenant.orgId });
    const used = await createToken(t, tenant.userId, { orgId: tenant.orgId });
    assert.equal((await get('/api/v1/me', bearer(used))).statusCode, 200);
    await t.services.db.query('UPDATE api_tokens SET revoked_at = $2 WHERE user_id = $1', [tenant.userId, t.clock.now()]);
    // Never verified before: refused at once.
    for (const url of URLS) assertError(await get(url, bearer(never)), 401, 'UNAUTHENTICATED');
    // Verified within the TTL: trusted until it lapses (documented: revocation reaches other nodes within the TTL).
    assert.equal((await get('/api/v1/me', bearer(used))).statusCode, 200);
    t.clock.advance(TTL_SECS * 1000 + 1000);
    for (const url of URLS) assertError(await get(url, bearer(used)), 401, 'UNAUTHENTICATED');
  });

  it('an expired token is refused, even from the cache; a token without expiry never lapses', async () => {
    const tenant = await createTenant(t);
    const expiring = await createToken(t, tenant.userId, { orgId: tenant.orgId, expiresInDays: 1 });
    const forever = await createToken(t, tenant.userId, { orgId: tenant.orgId });
    assert.equal((await get('/api/v1/me', bearer(expiring))).statusCode, 200);
    t.clock.advance(DAY_MS - 5_000);
    assert.equal((await get('/api/v1/me', bearer(expiring))).statusCode, 200);
    // Still inside the cache TTL of the last verification, but past expiry.
    t.clock.advance(10_000);
    for (const url of URLS) assertError(await get(url, bearer(expiring)), 401, 'UNAUTHENTICATED');
    t.clock.advance(TTL_SECS * 1000 + 1000);
    assertError(await get('/api/v1/me', bearer(expiring)), 401, 'UNAUTHENTICATED');

    t.clock.advance(20 * 365 * DAY_MS);
    for (const url of URLS) assert.equal((await get(url, bearer(forever))).statusCode, 200, url);
  });

  it('401 TOKEN_AUDIENCE for a token carrying an audience (MCP-minted); a token without one works', async () => {
    const tenant = await createTenant(t);
    const mcp = await createToken(t, tenant.userId, { orgId: tenant.orgId });
    const ui = await createToken(t, tenant.userId, { orgId: tenant.orgId });
    const prefix = mcp.slice(0, 16);
    await t.services.db.query('UPDATE api_tokens SET audience = $2 WHERE prefix = $1', [prefix, 'https://keepwatch.example/mcp']);
    for (const url of URLS) assertError(await get(url, bearer(mcp)), 401, 'TOKEN_AUDIENCE');
    // Also when served from the cache.
    assertError(await get('/api/v1/me', bearer(mcp)), 401, 'TOKEN_AUDIENCE');
    for (const url of URLS) assert.equal((await get(url, bearer(ui))).statusCode, 200, url);
  });

  it('403 INSUFFICIENT_SCOPE when the token lacks the route\'s scope', async () => {
    const tenant = await createTenant(t);
    const cases: Array<{ scopes: string[]; allowed: Scope[] }> = [
      { scopes: ['targets:write'], allowed: ['targets:read', 'targets:write'] },
      { scopes: ['targets:read'], allowed: ['targets:read'] },
      { scopes: ['targets:delete'], allowed: ['targets:delete'] },
      { scopes: ['targets:execute', 'nonsense:read', 'targets:*'], allowed: ['targets:execute'] },
      { scopes: ['channels:write'], allowed: ['channels:read'] },
      { scopes: [], allowed: [] },
      { scopes: ['full_access'], allowed: PROBES },
    ];
    for (const { scopes, allowed } of cases) {
      const token = await createToken(t, tenant.userId, { orgId: tenant.orgId, scopes });
      for (const scope of PROBES) {
        const res = await get(probeUrl(scope), bearer(token));
        if (allowed.includes(scope)) {
          assert.equal(res.statusCode, 200, `${scopes} -> ${scope}`);
          assert.deepEqual(res.json(), { org: tenant.orgSlug, user: tenant.userId });
        } else {
          assertError(res, 403, 'INSUFFICIENT_SCOPE');
          assert.match((res.json() as { error: { message: string } }).error.message, new RegExp(scope));
        }
      }
      // Routes without a scope need only a valid token.
      assert.equal((await get('/api/v1/regions', bearer(token))).statusCode, 200);
    }
  });
});
