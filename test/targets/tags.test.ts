// GET /api/v1/tags: the org's tag inventory with target counts, prefix filter, pagination, isolation, scope.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, type Api, type Json } from './helpers.js';

describe('GET /api/v1/tags', () => {
  let t: TestApp;
  let a: Tenant & { token: string };
  let b: Tenant & { token: string };
  let api: Api;
  before(async () => {
    t = await startTestApp();
    a = await createTenantWithToken(t, { plan: 'team' });
    b = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, a.token);
    for (const tags of [['prod', 'web'], ['prod', 'db'], ['Prod-eu'], ['staging', 'web'], ['100%_up'], ['100x'], ['a\\b'], []]) {
      const res = await api('POST', '/api/v1/targets', httpTarget({ tags }));
      assert.equal(res.statusCode, 201, res.body);
    }
    // Another org's tags, one shared with a's, one only its own.
    for (const tags of [['prod'], ['prod', 'secret-b']]) {
      assert.equal((await client(t, b.token)('POST', '/api/v1/targets', httpTarget({ tags }))).statusCode, 201);
    }
  });
  after(async () => { await t.close(); });

  it('lists every tag with its target count, ordered by tag, in the list envelope', async () => {
    const res = await api('GET', '/api/v1/tags');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'private, max-age=10');
    assert.deepEqual(res.json(), {
      tags: [
        { tag: '100%_up', count: 1 }, { tag: '100x', count: 1 }, { tag: 'Prod-eu', count: 1 }, { tag: 'a\\b', count: 1 },
        { tag: 'db', count: 1 }, { tag: 'prod', count: 2 }, { tag: 'staging', count: 1 }, { tag: 'web', count: 2 },
      ],
      total: 8, limit: 50, offset: 0,
    });
  });

  it('counts follow writes: a PATCH moves a target between tags, a delete drops its tags', async () => {
    const created = (await api('POST', '/api/v1/targets', httpTarget({ tags: ['temp'] }))).json() as Json;
    const count = async (tag: string): Promise<number | undefined> =>
      ((await api('GET', `/api/v1/tags?q=${encodeURIComponent(tag)}`)).json() as Json).tags.find((x: Json) => x.tag === tag)?.count;
    assert.equal(await count('temp'), 1);
    await api('PATCH', `/api/v1/targets/${created.id}`, { tags: ['prod'] });
    assert.equal(await count('temp'), undefined);
    assert.equal(await count('prod'), 3);
    await api('DELETE', `/api/v1/targets/${created.id}`);
    assert.equal(await count('prod'), 2);
  });

  it('q is a case-insensitive prefix', async () => {
    const body = (await api('GET', '/api/v1/tags?q=PROD')).json() as Json;
    assert.deepEqual(body.tags, [{ tag: 'Prod-eu', count: 1 }, { tag: 'prod', count: 2 }]);
    assert.equal(body.total, 2);
    // A prefix, not a substring.
    assert.deepEqual(((await api('GET', '/api/v1/tags?q=eb')).json() as Json).tags, []);
    assert.deepEqual(((await api('GET', '/api/v1/tags?q=')).json() as Json).total, 8);
  });

  it('q escapes LIKE wildcards: % _ and \\ match only themselves', async () => {
    assert.deepEqual(((await api('GET', `/api/v1/tags?q=${encodeURIComponent('100%')}`)).json() as Json).tags, [{ tag: '100%_up', count: 1 }]);
    assert.deepEqual(((await api('GET', `/api/v1/tags?q=${encodeURIComponent('100_')}`)).json() as Json).tags, []);
    assert.deepEqual(((await api('GET', `/api/v1/tags?q=${encodeURIComponent('%')}`)).json() as Json).tags, []);
    assert.deepEqual(((await api('GET', `/api/v1/tags?q=${encodeURIComponent('_')}`)).json() as Json).tags, []);
    assert.deepEqual(((await api('GET', `/api/v1/tags?q=${encodeURIComponent('a\\')}`)).json() as Json).tags, [{ tag: 'a\\b', count: 1 }]);
  });

  it('paginates with limit and offset; total counts every matching tag', async () => {
    const page = (await api('GET', '/api/v1/tags?limit=3&offset=2')).json() as Json;
    assert.deepEqual(page, { tags: [{ tag: 'Prod-eu', count: 1 }, { tag: 'a\\b', count: 1 }, { tag: 'db', count: 1 }], total: 8, limit: 3, offset: 2 });
    const past = (await api('GET', '/api/v1/tags?offset=100')).json() as Json;
    assert.deepEqual(past, { tags: [], total: 8, limit: 50, offset: 100 });
    assert.equal(((await api('GET', '/api/v1/tags?limit=1000')).json() as Json).limit, 1000);
    expectError(await api('GET', '/api/v1/tags?limit=0'), 400, 'VALIDATION_FAILED');
    expectError(await api('GET', '/api/v1/tags?limit=1001'), 400, 'VALIDATION_FAILED');
    expectError(await api('GET', '/api/v1/tags?offset=-1'), 400, 'VALIDATION_FAILED');
  });

  it("never shows or counts another org's tags", async () => {
    assert.ok(!JSON.stringify((await api('GET', '/api/v1/tags?limit=1000')).json()).includes('secret-b'));
    assert.deepEqual(((await api('GET', '/api/v1/tags?q=secret')).json() as Json), { tags: [], total: 0, limit: 50, offset: 0 });
    const theirs = (await client(t, b.token)('GET', '/api/v1/tags')).json() as Json;
    assert.deepEqual(theirs, { tags: [{ tag: 'prod', count: 2 }, { tag: 'secret-b', count: 1 }], total: 2, limit: 50, offset: 0 });
  });

  it('needs targets:read', async () => {
    const none = client(t, await createToken(t, a.userId, { orgId: a.orgId, scopes: ['variables:read'] }));
    expectError(await none('GET', '/api/v1/tags'), 403, 'INSUFFICIENT_SCOPE');
    const deleteOnly = client(t, await createToken(t, a.userId, { orgId: a.orgId, scopes: ['targets:delete'] }));
    expectError(await deleteOnly('GET', '/api/v1/tags'), 403, 'INSUFFICIENT_SCOPE');
    const readOnly = client(t, await createToken(t, a.userId, { orgId: a.orgId, scopes: ['targets:read'] }));
    assert.equal((await readOnly('GET', '/api/v1/tags')).statusCode, 200);
  });
});
