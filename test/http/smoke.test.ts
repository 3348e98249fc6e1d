import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';

describe('smoke: a tenant reads the region catalog', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('lists the local region with a bound token', async () => {
    const tenant = await createTenantWithToken(t);
    const res = await t.inject({ method: 'GET', url: '/api/v1/regions', headers: bearer(tenant.token) });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(res.json(), { regions: [{ id: 'local', name: 'Local', city: null, country_code: null, continent: null, latitude: null, longitude: null }] });
  });
});
