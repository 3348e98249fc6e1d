// Conventions 1, 6 and 9: response headers (Cache-Control, Content-Type, Location), 404s for
// unknown routes and malformed ids, and the health probes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { cacheControlFor } from '../../src/http/conventions.js';
import { addRoute } from '../../src/http/route.js';
import { bearer, createTenantWithToken, OPERATOR_SECRET, startTestApp, type TestApp } from '../helpers/app.js';
import { createTestStore } from '../helpers/store.js';

const JSON_TYPE = 'application/json; charset=utf-8';

function assertNotFound(res: LightMyRequestResponse, what: string): void {
  assert.equal(res.statusCode, 404, `${what}: ${res.body}`);
  assert.equal(res.headers['content-type'], JSON_TYPE, what);
  const { error } = res.json() as { error: { code: string; message: string } };
  assert.equal(error.code, 'NOT_FOUND', what);
  assert.equal(typeof error.message, 'string');
}

describe('cacheControlFor', () => {
  it('gives mutations no-store and reads a short private cache', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) assert.equal(cacheControlFor(method, '/api/v1/targets'), 'no-store', method);
    assert.equal(cacheControlFor('GET', '/api/v1/targets'), 'private, max-age=10');
    assert.equal(cacheControlFor('GET', '/api/v1/targets?limit=5'), 'private, max-age=10');
    assert.equal(cacheControlFor('HEAD', '/api/v1/regions'), 'private, max-age=10');
  });
  it('gives the dashboard summary five seconds, with or without a query', () => {
    assert.equal(cacheControlFor('GET', '/api/v1/dashboard/summary'), 'private, max-age=5');
    assert.equal(cacheControlFor('GET', '/api/v1/dashboard/summary?x=1'), 'private, max-age=5');
    assert.equal(cacheControlFor('GET', '/api/v1/dashboard/summary/other'), 'private, max-age=10');
    assert.equal(cacheControlFor('POST', '/api/v1/dashboard/summary'), 'no-store');
  });
  it('never caches the operator surface and leaves other paths alone', () => {
    assert.equal(cacheControlFor('GET', '/operator/regions'), 'no-store');
    assert.equal(cacheControlFor('GET', '/healthz'), undefined);
    assert.equal(cacheControlFor('GET', '/api/v10/x'), undefined);
    assert.equal(cacheControlFor('GET', '/api/v1'), 'private, max-age=10');
  });
});

describe('response headers, 404s and health', () => {
  let t: TestApp;
  let token: string;
  const op = { authorization: `Bearer ${OPERATOR_SECRET}` };

  before(async () => {
    t = await startTestApp({
      extraRoutes: (app) => {
        for (const method of ['POST', 'PATCH', 'DELETE'] as const) {
          addRoute(app, {
            method, url: '/api/v1/probe-mutation', auth: 'user', orgScoped: false, tags: ['probe'], summary: 'probe',
            response: { 200: Type.Object({ ok: Type.Boolean() }) }, handler: async () => ({ ok: true }),
          });
        }
      },
    });
    token = (await createTenantWithToken(t)).token;
  });
  after(async () => { await t.close(); });

  it('caches a successful /api/v1 read privately for 10 seconds, as JSON, apart for each token, session and org header', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/regions', headers: bearer(token) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'private, max-age=10');
    assert.equal(res.headers.vary, 'Authorization, Cookie, X-Service-Org');
    assert.equal(res.headers['content-type'], JSON_TYPE);
  });

  it('takes the Cache-Control of the route matched, however its path was written', async () => {
    for (const url of ['/api/v1/dashboard/%73ummary', 'http://example.test/api/v1/dashboard/summary']) {
      const res = await t.inject({ method: 'GET', url, headers: bearer(token) });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      assert.equal(res.headers['cache-control'], 'private, max-age=5', url);
    }
  });

  it('answers every request with its request id, echoing one the client sent', async () => {
    const minted = await t.inject({ method: 'GET', url: '/api/v1/regions', headers: bearer(token) });
    assert.match(String(minted.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const echoed = await t.inject({ method: 'GET', url: '/api/v1/nope', headers: { ...bearer(token), 'x-request-id': 'trace-42' } });
    assert.equal(echoed.headers['x-request-id'], 'trace-42');
  });

  it('sets the read Cache-Control on error answers to GET too', async () => {
    for (const headers of [{}, bearer('sm_live_nonsense')]) {
      const res = await t.inject({ method: 'GET', url: '/api/v1/regions', headers });
      assert.equal(res.statusCode, 401);
      assert.equal(res.headers['cache-control'], 'private, max-age=10');
      assert.equal(res.headers.vary, 'Authorization, Cookie, X-Service-Org');
      assert.equal(res.headers['content-type'], JSON_TYPE);
    }
    const missing = await t.inject({ method: 'GET', url: '/api/v1/no-such-thing', headers: bearer(token) });
    assertNotFound(missing, 'unknown /api/v1 route');
    assert.equal(missing.headers['cache-control'], 'private, max-age=10');
  });

  it('marks POST, PATCH and DELETE on /api/v1 no-store, success or failure', async () => {
    for (const method of ['POST', 'PATCH', 'DELETE'] as const) {
      const ok = await t.inject({ method, url: '/api/v1/probe-mutation', headers: bearer(token) });
      assert.equal(ok.statusCode, 200, `${method}: ${ok.body}`);
      assert.equal(ok.headers['cache-control'], 'no-store', method);
      assert.equal(ok.headers.vary, undefined, method);
      const unauthenticated = await t.inject({ method, url: '/api/v1/probe-mutation' });
      assert.equal(unauthenticated.statusCode, 401);
      assert.equal(unauthenticated.headers['cache-control'], 'no-store', method);
    }
  });

  it('marks operator responses no-store and answers a create with 201 and Location', async () => {
    const list = await t.operator('GET', '/operator/regions');
    assert.equal(list.statusCode, 200);
    assert.equal(list.headers['cache-control'], 'no-store');
    assert.equal(list.headers['content-type'], JSON_TYPE);

    const created = await t.operator('POST', '/operator/regions', { id: 'eu-hdr', name: 'EU headers' });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers.location, '/operator/regions/eu-hdr');
    assert.equal(created.headers['cache-control'], 'no-store');
    assert.equal(created.headers['content-type'], JSON_TYPE);
    const followed = await t.operator('GET', created.headers.location as string);
    assert.equal(followed.statusCode, 200);
    assert.equal((followed.json() as { id: string }).id, 'eu-hdr');
  });

  it('answers 404 NOT_FOUND with the envelope for unknown routes everywhere', async () => {
    const cases: Array<[string, string, Record<string, string>]> = [
      ['GET', '/api/v1/nope', bearer(token)],
      ['GET', '/api/v1/nope', {}],
      ['GET', '/api/v1/regions/', bearer(token)],
      ['GET', '/operator/nope', op],
      ['GET', '/operator/nope', {}],
      ['GET', '/nope', {}],
      ['POST', '/', {}],
      ['GET', '/api/v2/regions', {}],
    ];
    for (const [method, url, headers] of cases) {
      assertNotFound(await t.inject({ method: method as 'GET', url, headers }), `${method} ${url}`);
    }
    // A method an existing API path does not take is 405, not 404.
    const wrongMethod = await t.inject({ method: 'DELETE', url: '/api/v1/regions', headers: bearer(token) });
    assert.equal(wrongMethod.statusCode, 405);
    assert.equal(wrongMethod.headers.allow, 'GET, HEAD, OPTIONS');
  });

  it('answers 404 NOT_FOUND for malformed path ids', async () => {
    const cases: Array<[string, string]> = [
      ['GET', '/operator/regions/NOT_A_REGION'],
      ['GET', `/operator/regions/${'a'.repeat(80)}`],
      ['GET', `/operator/regions/${'a'.repeat(500)}`],
      ['GET', '/operator/regions/%E0%A4%A'],
      ['PATCH', '/operator/regions/Bad%20Id'],
      ['PUT', '/operator/accounts/not-a-uuid/overrides'],
      ['DELETE', '/operator/accounts/1234/overrides'],
      ['POST', '/operator/users/zzz/api-tokens'],
      ['DELETE', '/operator/agents/not-a-uuid'],
    ];
    for (const [method, url] of cases) {
      const res = await t.inject({ method: method as 'GET', url, headers: { ...op, 'content-type': 'application/json' }, payload: '{"name":"x","reason":"r","caps":{},"scopes":[]}' });
      assertNotFound(res, `${method} ${url}`);
      assert.equal(res.headers['cache-control'], 'no-store', `${method} ${url}`);
    }
    const badUrl = await t.inject({ method: 'GET', url: '/api/v1/regions%E0%A4%A', headers: bearer(token) });
    assertNotFound(badUrl, 'malformed percent-encoding under /api/v1');
    assert.equal(badUrl.headers['cache-control'], 'private, max-age=10');
    const user = await t.inject({ method: 'GET', url: '/api/v1/orgs/not-a-uuid/usage', headers: bearer(token) });
    assertNotFound(user, 'user route with a malformed id');
  });

  it('serves /healthz and /readyz without authentication', async () => {
    const health = await t.inject({ method: 'GET', url: '/healthz' });
    assert.equal(health.statusCode, 200);
    assert.deepEqual(health.json(), { status: 'ok' });
    assert.equal(health.headers['content-type'], JSON_TYPE);
    const ready = await t.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.equal(ready.headers['content-type'], JSON_TYPE);
  });
});

describe('readiness once the store is gone', () => {
  it('answers /readyz 503 with a code while /healthz stays 200', async () => {
    // Its own store, so this test closes the connection itself and then drops the database once.
    const store = await createTestStore();
    const t = await startTestApp({ store });
    try {
      assert.equal((await t.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      await store.db.close();
      const ready = await t.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503, ready.body);
      assert.equal(ready.headers['content-type'], JSON_TYPE);
      assert.equal((ready.json() as { error: { code: string } }).error.code, 'SERVICE_UNAVAILABLE');
      const health = await t.inject({ method: 'GET', url: '/healthz' });
      assert.equal(health.statusCode, 200);
      assert.deepEqual(health.json(), { status: 'ok' });
    } finally {
      await t.close();
      if (store.url) await dropDatabase(store.url);
    }
  });
});

async function dropDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
