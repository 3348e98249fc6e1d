// Bulk actions (CONTRACT.md: POST /api/v1/targets/bulk-action): each action, PATCH rules per
// monitor, per-id errors, all-or-nothing, and the delete scope.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, type Api, type Json } from './helpers.js';

describe('targets: bulk actions', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  const act = (body: Json, as: Api = api, headers?: Record<string, string>) => as('POST', '/api/v1/targets/bulk-action', body, headers);
  const make = async (n: number, extra: Json = {}) =>
    ((await api('POST', '/api/v1/targets/bulk', { targets: Array.from({ length: n }, (_, i) => httpTarget({ name: `m${i}`, ...extra })) })).json().targets as Json[]).map((x) => x.id as string);
  const get = async (id: string) => (await api('GET', `/api/v1/targets/${id}`)).json() as Json;

  it('disable and enable answer the monitors in ids order and restamp write_source', async () => {
    const ids = await make(3);
    const order = [ids[2]!, ids[0]!];
    const res = await act({ action: 'disable', ids: order }, api, { 'x-keepwatch-client': 'iac' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual((res.json().targets as Json[]).map((x) => [x.id, x.enabled, x.write_source]), [[ids[2], false, 'iac'], [ids[0], false, 'iac']]);
    assert.equal((await get(ids[1]!)).enabled, true, 'others untouched');
    assert.deepEqual(((await act({ action: 'enable', ids: order })).json().targets as Json[]).map((x) => x.enabled), [true, true]);
  });

  it('tag-add and tag-remove; set-group and its clearing', async () => {
    const ids = await make(2, { tags: ['web'] });
    const added = (await act({ action: 'tag-add', ids, tags: [' eu ', 'web', 'eu'] })).json().targets as Json[];
    assert.deepEqual(added.map((x) => x.tags), [['web', 'eu'], ['web', 'eu']]);
    expectError(await act({ action: 'tag-add', ids, tags: ['ok', ' '] }), 400, 'VALIDATION_FAILED', 'tags[1]');
    const removed = (await act({ action: 'tag-remove', ids, tags: ['web'] })).json().targets as Json[];
    assert.deepEqual(removed.map((x) => x.tags), [['eu'], ['eu']]);
    assert.deepEqual(((await act({ action: 'set-group', ids, group_name: 'edge' })).json().targets as Json[]).map((x) => x.group_name), ['edge', 'edge']);
    assert.deepEqual(((await act({ action: 'set-group', ids, group_name: ' edge ' })).json().targets as Json[]).map((x) => x.group_name), ['edge', 'edge']);
    assert.deepEqual(((await act({ action: 'set-group', ids, group_name: '  ' })).json().targets as Json[]).map((x) => x.group_name), [null, null]);
    await act({ action: 'set-group', ids, group_name: 'edge' });
    assert.deepEqual(((await act({ action: 'set-group', ids, group_name: null })).json().targets as Json[]).map((x) => x.group_name), [null, null]);
  });

  it('tag-add that would leave a monitor with more than 50 tags names that id; nothing changes', async () => {
    const [roomy] = await make(1);
    const [full] = await make(1, { tags: Array.from({ length: 50 }, (_, i) => `t${i}`) });
    expectError(await act({ action: 'tag-add', ids: [roomy, full], tags: ['new'] }), 400, 'VALIDATION_FAILED', 'ids[1]');
    assert.deepEqual((await get(roomy!)).tags, []);
  });

  it('set-interval applies each monitor\'s floor: errors name the id, and nothing changes', async () => {
    const ids = await make(2);
    const flow = (await api('POST', '/api/v1/targets', { name: 'f', check: { type: 'flow', start_url: 'https://93.184.216.34/', steps: [{ op: 'assert_url', contains: '/' }] } })).json().id as string;
    const manual = (await api('POST', '/api/v1/targets', { name: 'm', check: { type: 'manual' } })).json().id as string;
    expectError(await act({ action: 'set-interval', ids: [...ids, flow], interval: 120 }), 422, 'MIN_CHECK_INTERVAL', 'ids[2]');
    expectError(await act({ action: 'set-interval', ids: [ids[0], manual], interval: 120 }), 400, 'INVALID_INTERVAL', 'ids[1]');
    expectError(await act({ action: 'set-interval', ids, interval: 0 }), 422, 'MIN_CHECK_INTERVAL', 'ids[0]');
    expectError(await act({ action: 'set-interval', ids: [manual], interval: -60 }), 400, 'INVALID_INTERVAL', 'ids[0]');
    assert.equal((await get(ids[0]!)).interval, 60);
    assert.deepEqual(((await act({ action: 'set-interval', ids, interval: 300 })).json().targets as Json[]).map((x) => x.interval), [300, 300]);
  });

  it('bind-channels and unbind-channels; an unknown channel names itself', async () => {
    const ids = await make(2);
    const channel = (await api('POST', '/api/v1/notification-channels', { name: 'c', config: { type: 'email', to: 'a@example.com' } })).json().id as string;
    const bound = (await act({ action: 'bind-channels', ids, channel_ids: [channel] })).json().targets as Json[];
    assert.deepEqual(bound.map((x) => x.alerts), [[{ channel_id: channel }], [{ channel_id: channel }]]);
    assert.deepEqual(((await act({ action: 'bind-channels', ids, channel_ids: [channel] })).json().targets as Json[])[0]!.alerts, [{ channel_id: channel }], 'binding twice keeps one');
    expectError(await act({ action: 'bind-channels', ids, channel_ids: ['0190a0a0-0000-7000-8000-000000000000'] }), 400, 'INVALID_ALERT_CONFIG', 'channel_ids[0]');
    expectError(await act({ action: 'bind-channels', ids, channel_ids: [channel, channel] }), 400, 'INVALID_ALERT_CONFIG', 'channel_ids[1]');
    expectError(await act({ action: 'bind-channels', ids, channel_ids: [channel, 'nope'] }), 400, 'INVALID_ALERT_CONFIG', 'channel_ids[1]');
    assert.deepEqual(((await act({ action: 'unbind-channels', ids, channel_ids: [channel] })).json().targets as Json[]).map((x) => x.alerts), [[], []]);
  });

  it('ids: an unknown or foreign id is 404 naming it, a duplicate is 400; nothing changes', async () => {
    const ids = await make(2);
    const other = await createTenantWithToken(t, { plan: 'team' });
    const foreign = (await client(t, other.token)('POST', '/api/v1/targets', httpTarget())).json().id as string;
    expectError(await act({ action: 'disable', ids: [ids[0], foreign] }), 404, 'NOT_FOUND', 'ids[1]');
    expectError(await act({ action: 'disable', ids: [ids[0], 'nope'] }), 404, 'NOT_FOUND', 'ids[1]');
    expectError(await act({ action: 'disable', ids: [ids[0], ids[0]] }), 400, 'VALIDATION_FAILED', 'ids[1]');
    expectError(await act({ action: 'disable', ids: [] }), 400, 'VALIDATION_FAILED', 'ids');
    // More ids than a request takes is 413 BULK_TOO_LARGE, as for a bulk create.
    expectError(await act({ action: 'disable', ids: [...ids, ...Array.from({ length: 9_999 }, () => ids[0])] }), 413, 'BULK_TOO_LARGE', 'ids');
    expectError(await act({ action: 'explode', ids }), 400, 'VALIDATION_FAILED', 'action');
    expectError(await act({ action: 'disable', ids, tags: ['x'] }), 422, 'INVALID_JSON', 'tags');
    assert.equal((await get(ids[0]!)).enabled, true);
    assert.equal((await client(t, other.token)('GET', `/api/v1/targets/${foreign}`)).json().enabled, true);
  });

  it('delete answers {deleted}', async () => {
    const ids = await make(2);
    const res = await act({ action: 'delete', ids: [ids[1], ids[0]] });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { deleted: [ids[1], ids[0]] });
    expectError(await api('GET', `/api/v1/targets/${ids[0]}`), 404, 'NOT_FOUND');
  });

  it('scopes: delete needs targets:delete alone, every other action targets:write; 403 names the scope, before the body is judged', async () => {
    const ids = await make(2);
    const token = (scopes: string[]) => createToken(t, tenant.userId, { orgId: tenant.orgId, scopes });
    const writer = client(t, await token(['targets:write']));
    const deleter = client(t, await token(['targets:read', 'targets:delete']));
    const reader = client(t, await token(['targets:read']));
    const denied = (res: Awaited<ReturnType<Api>>, scope: string) => assert.match(expectError(res, 403, 'INSUFFICIENT_SCOPE').message, new RegExp(scope));
    denied(await act({ action: 'delete', ids }, writer), 'targets:delete');
    denied(await act({ action: 'delete', ids: [] }, reader), 'targets:delete');
    denied(await act({ action: 'disable', ids }, deleter), 'targets:write');
    denied(await act({ action: 'explode', ids: [] }, deleter), 'targets:write');
    assert.equal((await get(ids[0]!)).enabled, true, 'nothing changed');
    assert.equal((await act({ action: 'disable', ids }, writer)).statusCode, 200);
    const res = await act({ action: 'delete', ids }, deleter);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { deleted: ids });
  });

  it('the OpenAPI document states the per-action scopes', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Json;
    const op = doc.paths['/api/v1/targets/bulk-action'].post as Json;
    assert.deepEqual(op.security, [{ apiToken: [] }]);
    assert.match(op.description, /`targets:delete` for `delete` and `targets:write` for every other action/);
  });
});
