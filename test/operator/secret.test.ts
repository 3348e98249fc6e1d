// The operator surface is invisible (404 NOT_FOUND) without its secret: unset and not generated,
// or presented wrong. Zero-config installs generate the secret into data_dir (mode 0600).
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OPERATOR_SECRET_FILE } from '../../src/config/secrets.js';
import { createTenantWithToken, OPERATOR_SECRET, startTestApp, type TestApp } from '../helpers/app.js';

const SOME_ID = '0190a7c2-6f1e-7a00-8000-000000000001';
const KNOWN = [
  'PUT /operator/accounts/{id}/plan', 'PUT /operator/accounts/{id}/overrides', 'DELETE /operator/accounts/{id}/overrides',
  'POST /operator/users', 'POST /operator/users/{user_id}/api-tokens', 'GET /operator/regions', 'POST /operator/regions',
  'GET /operator/regions/{id}', 'PATCH /operator/regions/{id}', 'GET /operator/agents', 'POST /operator/agents',
  'GET /operator/agents/{id}', 'DELETE /operator/agents/{id}',
];

/** Every operator route the app serves, read from its own OpenAPI document. */
async function operatorRoutes(t: TestApp): Promise<Array<{ method: string; url: string; key: string }>> {
  const doc = (await t.inject({ method: 'GET', url: '/api/openapi.json' })).json() as {
    paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>;
  };
  const routes = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!op.security?.some((s) => 'operatorSecret' in s)) continue;
      const url = path.replace('{id}', path.includes('/regions/') ? 'local' : SOME_ID).replace('{user_id}', SOME_ID);
      routes.push({ method: method.toUpperCase(), url, key: `${method.toUpperCase()} ${path}` });
    }
  }
  return routes;
}

function assertInvisible(res: { statusCode: number; json(): unknown }, what: string): void {
  assert.equal(res.statusCode, 404, what);
  assert.equal((res.json() as { error: { code: string } }).error.code, 'NOT_FOUND', what);
}

describe('operator surface without a secret (operator.auto_secret off)', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ config: { 'operator.secret': undefined, 'operator.auto_secret': false } }); });
  after(async () => { await t.close(); });

  it('answers every operator route 404 NOT_FOUND, whatever bearer is sent', async () => {
    assert.equal(t.services.operatorSecret, null);
    const routes = await operatorRoutes(t);
    for (const key of KNOWN) assert.ok(routes.some((r) => r.key === key), `${key} is documented as an operator route`);
    const tenant = await mintTokenDirectly(t);
    for (const { method, url, key } of routes) {
      for (const authorization of [undefined, `Bearer ${OPERATOR_SECRET}`, 'Bearer ', `Bearer ${tenant}`]) {
        const res = await t.inject({ method: method as 'GET', url, headers: authorization ? { authorization } : {}, ...(method !== 'GET' && method !== 'DELETE' && { payload: {} }) });
        assertInvisible(res, `${key} with ${authorization ?? 'no header'}`);
      }
    }
  });
});

/** A real API token, minted without the operator surface: straight through the token module. */
async function mintTokenDirectly(t: TestApp): Promise<string> {
  const { createOwner } = await import('../../src/identity/users.js');
  const { createApiToken } = await import('../../src/identity/api-tokens.js');
  const owner = await t.services.db.transaction((tx) => createOwner(tx, { email: `nosecret-${Date.now()}@example.test`, planId: 'team', orgName: 'No Secret', verified: true }));
  const { token } = await createApiToken(t.services.db, t.clock, { userId: owner.user_id, name: 't', scopes: ['full_access'], orgId: owner.org_id, expiresInDays: null, limit: null, actor: { type: 'operator' } });
  return token;
}

describe('operator surface with a configured secret', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('answers 404 NOT_FOUND to a missing, wrong or user bearer, and serves the right one', async () => {
    const tenant = await createTenantWithToken(t);
    const routes = await operatorRoutes(t);
    assert.ok(routes.length >= KNOWN.length);
    const wrong = [undefined, 'Bearer wrong', `Bearer ${OPERATOR_SECRET}x`, `Bearer ${OPERATOR_SECRET.slice(0, -1)}`, OPERATOR_SECRET,
      `Basic ${OPERATOR_SECRET}`, `Bearer ${tenant.token}`];
    for (const { method, url, key } of routes) {
      for (const authorization of wrong) {
        const res = await t.inject({ method: method as 'GET', url, headers: authorization ? { authorization } : {}, ...(method !== 'GET' && method !== 'DELETE' && { payload: {} }) });
        assertInvisible(res, `${key} with ${authorization ?? 'no header'}`);
      }
    }
    const ok = await t.inject({ method: 'GET', url: '/operator/regions', headers: { authorization: `Bearer ${OPERATOR_SECRET}` } });
    assert.equal(ok.statusCode, 200);
    // Two Authorization headers, the right one first: no answer, whichever a proxy would read.
    const twice = await t.inject({ method: 'GET', url: '/operator/regions', headers: { authorization: [`Bearer ${OPERATOR_SECRET}`, 'Bearer other'] as unknown as string } });
    assertInvisible(twice, 'two Authorization headers');
  });
});

describe('operator surface with a generated secret (operator.auto_secret on, the default)', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ config: { 'operator.secret': undefined } }); });
  after(async () => { await t.close(); });

  it('writes <data_dir>/operator-secret with mode 0600 and accepts exactly that secret', async () => {
    const file = join(t.services.dataDir, OPERATOR_SECRET_FILE);
    assert.equal(OPERATOR_SECRET_FILE, 'operator-secret');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const content = readFileSync(file, 'utf8').trim();
    assert.ok(content.length >= 32, 'at least 32 characters of randomness');
    assert.equal(t.services.operatorSecret, content);

    const accepted = await t.inject({ method: 'GET', url: '/operator/regions', headers: { authorization: `Bearer ${content}` } });
    assert.equal(accepted.statusCode, 200);
    assert.ok((accepted.json() as { regions: Array<{ id: string }> }).regions.some((r) => r.id === 'local'));
    const created = await t.inject({ method: 'POST', url: '/operator/users', headers: { authorization: `Bearer ${content}` }, payload: { email: `auto-${Date.now()}@example.test` } });
    assert.equal(created.statusCode, 201);
    assertInvisible(await t.inject({ method: 'GET', url: '/operator/regions', headers: { authorization: `Bearer ${OPERATOR_SECRET}` } }), 'the test secret is not configured here');
    assertInvisible(await t.inject({ method: 'GET', url: '/operator/regions' }), 'no bearer');
  });
});
