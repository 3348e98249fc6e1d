// Who may reach a target: org isolation (404) and token scopes (403) on every targets route.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, type Json } from './helpers.js';

describe('targets: access', () => {
  let t: TestApp;
  let a: Tenant & { token: string };
  let b: Tenant & { token: string };
  let targetId: string;
  before(async () => {
    t = await startTestApp();
    a = await createTenantWithToken(t);
    b = await createTenantWithToken(t);
    targetId = ((await client(t, a.token)('POST', '/api/v1/targets', httpTarget())).json() as Json).id;
  });
  after(async () => { await t.close(); });

  it("another org's target is 404 on every route, and is left untouched", async () => {
    const other = client(t, b.token);
    expectError(await other('GET', `/api/v1/targets/${targetId}`), 404, 'NOT_FOUND');
    expectError(await other('PATCH', `/api/v1/targets/${targetId}`, { name: 'stolen' }), 404, 'NOT_FOUND');
    expectError(await other('DELETE', `/api/v1/targets/${targetId}`), 404, 'NOT_FOUND');
    expectError(await other('GET', `/api/v1/targets/${targetId}/regions`), 404, 'NOT_FOUND');
    expectError(await other('PUT', `/api/v1/targets/${targetId}/regions`, { regions: [] }), 404, 'NOT_FOUND');
    assert.equal(((await other('GET', '/api/v1/targets')).json() as Json).total, 0);
    const mine = (await client(t, a.token)('GET', `/api/v1/targets/${targetId}`)).json() as Json;
    assert.equal(mine.name, 'web');
    assert.deepEqual(mine.regions, ['local']);
  });

  it('each route needs its scope', async () => {
    const readOnly = client(t, await createToken(t, a.userId, { orgId: a.orgId, scopes: ['targets:read'] }));
    const writeOnly = client(t, await createToken(t, a.userId, { orgId: a.orgId, scopes: ['targets:write'] }));
    const none = client(t, await createToken(t, a.userId, { orgId: a.orgId, scopes: ['variables:read'] }));
    expectError(await none('GET', '/api/v1/targets'), 403, 'INSUFFICIENT_SCOPE');
    expectError(await none('GET', `/api/v1/targets/${targetId}`), 403, 'INSUFFICIENT_SCOPE');
    expectError(await none('GET', `/api/v1/targets/${targetId}/regions`), 403, 'INSUFFICIENT_SCOPE');
    expectError(await readOnly('POST', '/api/v1/targets', httpTarget()), 403, 'INSUFFICIENT_SCOPE');
    expectError(await readOnly('PATCH', `/api/v1/targets/${targetId}`, { name: 'x' }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await readOnly('PUT', `/api/v1/targets/${targetId}/regions`, { regions: [] }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await writeOnly('DELETE', `/api/v1/targets/${targetId}`), 403, 'INSUFFICIENT_SCOPE');
    assert.equal((await readOnly('GET', `/api/v1/targets/${targetId}`)).statusCode, 200);
    assert.equal((await writeOnly('PATCH', `/api/v1/targets/${targetId}`, { name: 'web' })).statusCode, 200);
    const deleter = client(t, await createToken(t, a.userId, { orgId: a.orgId, scopes: ['targets:delete'] }));
    assert.equal((await deleter('DELETE', `/api/v1/targets/${targetId}`)).statusCode, 204);
  });
});
