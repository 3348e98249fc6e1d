// Subscriptions on a build without a payment provider (service-api.md, "Subscriptions"): every
// endpoint is 404 BILLING_UNAVAILABLE to an authenticated caller, whatever they send, and the
// OpenAPI document lists them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';

const ENDPOINTS: Array<['GET' | 'POST' | 'PUT' | 'DELETE', string]> = [
  ['GET', '/api/v1/account/billing'], ['POST', '/api/v1/account/billing/checkout'], ['POST', '/api/v1/account/billing/portal'],
  ['PUT', '/api/v1/account/billing/plan'], ['POST', '/api/v1/account/billing/cancel'], ['DELETE', '/api/v1/account/billing/cancel'],
  ['GET', '/api/v1/account/holds'], ['PUT', '/api/v1/account/holds'],
];

describe('billing without a payment provider', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startTestApp();
    token = (await createTenantWithToken(t)).token;
  });
  after(async () => { await t.close(); });

  it('answers every endpoint 404 BILLING_UNAVAILABLE once authenticated, whatever the body; 401 without credentials', async () => {
    for (const [method, url] of ENDPOINTS) {
      const anonymous = await t.inject({ method, url });
      assert.equal(anonymous.statusCode, 401, `${method} ${url}`);
      assert.equal(anonymous.json().error.code, 'UNAUTHENTICATED');
      const asked = [
        t.inject({ method, url, headers: bearer(token) }),
        ...(method === 'GET' || method === 'DELETE' ? [] : [
          t.inject({ method, url, headers: { ...bearer(token), 'content-type': 'application/json' }, payload: '{"plan_id":"team","interval":"month","accept_terms":true}' }),
          t.inject({ method, url, headers: bearer(token), payload: 'not json' }),
        ]),
      ];
      for (const res of await Promise.all(asked)) {
        assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
        assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
        assert.equal(res.json().error.code, 'BILLING_UNAVAILABLE', `${method} ${url}`);
      }
    }
  });

  it('HEAD is no method of theirs: 405, and neither OPTIONS nor the 405 lists it in Allow', async () => {
    const options = await t.inject({ method: 'OPTIONS', url: '/api/v1/account/billing', headers: bearer(token) });
    assert.deepEqual([options.statusCode, options.headers.allow], [204, 'GET, OPTIONS']);
    const head = await t.inject({ method: 'HEAD', url: '/api/v1/account/holds', headers: bearer(token) });
    assert.deepEqual([head.statusCode, head.headers.allow], [405, 'GET, OPTIONS, PUT']);
  });

  it('lists them in the OpenAPI document', async () => {
    const paths = (await t.inject({ method: 'GET', url: '/api/openapi.json' })).json().paths as Record<string, Record<string, unknown>>;
    for (const [method, url] of ENDPOINTS) assert.ok(paths[url]?.[method.toLowerCase()], `${method} ${url}`);
  });
});
