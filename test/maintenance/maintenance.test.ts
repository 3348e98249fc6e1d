// Maintenance windows (monitoring-api.md, "Maintenance window" and its transitions, "Maintenance and
// incident narration"; CONTRACT.md shape): range rules, components, status from the clock, filters
// and their order, edits only before the end, cancel as history, updates and their limit, quota.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { onMaintenanceUpdate, type MaintenanceUpdateNews } from '../../src/maintenance/index.js';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, overrideCaps, type Api, type Json } from '../targets/helpers.js';

const BASE = '/api/v1/maintenance';
const HOUR = 3_600_000;

describe('maintenance windows', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  let monitorA: string;
  let monitorB: string;
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
    monitorA = (await api('POST', '/api/v1/targets', httpTarget({ name: 'a' }))).json().id;
    monitorB = (await api('POST', '/api/v1/targets', httpTarget({ name: 'b' }))).json().id;
  });
  after(async () => { await t.close(); });

  const at = (offsetMs: number) => new Date(t.clock.now().getTime() + offsetMs).toISOString();
  const schedule = (extra: Json = {}, as: Api = api) => as('POST', BASE, { title: 'DB upgrade', starts_at: at(HOUR), ends_at: at(2 * HOUR), ...extra });

  it('schedules with defaults and Location; the shape is CONTRACT.md\'s', async () => {
    const res = await schedule({ components: [monitorB, monitorA], description: ' Rolling restart ' });
    assert.equal(res.statusCode, 201, res.body);
    const w = res.json() as Json;
    assert.equal(res.headers.location, `${BASE}/${w.id}`);
    assert.deepEqual(Object.keys(w).sort(), ['components', 'created_at', 'deleted_at', 'deleted_by', 'description', 'ends_at', 'id', 'starts_at',
      'status', 'suppress_alerts', 'title', 'updated_at', 'updates', 'write_source']);
    assert.deepEqual([w.status, w.suppress_alerts, w.components, w.updates, w.deleted_at, w.deleted_by, w.write_source, w.description],
      ['upcoming', true, [monitorB, monitorA], [], null, null, 'api', 'Rolling restart']);
    assert.deepEqual((await api('GET', `${BASE}/${w.id}`)).json(), w);
  });

  it('range and component rules name the field', async () => {
    expectError(await schedule({ ends_at: at(HOUR) }), 400, 'VALIDATION_FAILED', 'ends_at');
    expectError(await schedule({ starts_at: at(-2 * HOUR), ends_at: at(-HOUR) }), 400, 'VALIDATION_FAILED', 'ends_at');
    expectError(await schedule({ ends_at: 'tomorrow' }), 400, 'VALIDATION_FAILED', 'ends_at');
    expectError(await schedule({ title: '  ' }), 400, 'VALIDATION_FAILED', 'title');
    expectError(await schedule({ components: [monitorA, monitorA] }), 400, 'VALIDATION_FAILED', 'components[1]');
    expectError(await schedule({ components: [monitorA, '0190a0a0-0000-7000-8000-000000000000'] }), 400, 'VALIDATION_FAILED', 'components[1]');
    expectError(await schedule({ components: ['not-an-id'] }), 400, 'VALIDATION_FAILED', 'components[0]');
    expectError(await schedule({ status: 'active' }), 422, 'INVALID_JSON', 'status');
    const other = await createTenantWithToken(t, { plan: 'team' });
    const foreign = (await client(t, other.token)('POST', '/api/v1/targets', httpTarget())).json().id;
    expectError(await schedule({ components: [foreign] }), 400, 'VALIDATION_FAILED', 'components[0]');
    const running = (await schedule({ starts_at: at(-HOUR) })).json() as Json;
    assert.equal(running.status, 'active', 'a start in the past runs at once');
  });

  it('status follows the clock; filters answer in their order (upcoming soonest first)', async () => {
    const own = await createTenantWithToken(t, { plan: 'team' });
    const ownApi = client(t, own.token);
    const later = (await schedule({ title: 'later', starts_at: at(5 * HOUR), ends_at: at(6 * HOUR) }, ownApi)).json() as Json;
    const sooner = (await schedule({ title: 'sooner', starts_at: at(HOUR), ends_at: at(3 * HOUR) }, ownApi)).json() as Json;
    const now = (await schedule({ title: 'now', starts_at: at(-HOUR), ends_at: at(HOUR / 2) }, ownApi)).json() as Json;
    const doomed = (await schedule({ title: 'doomed', starts_at: at(4 * HOUR), ends_at: at(7 * HOUR) }, ownApi)).json() as Json;
    assert.equal((await ownApi('DELETE', `${BASE}/${doomed.id}`)).statusCode, 204);
    const titles = async (status?: string) =>
      ((await ownApi('GET', `${BASE}${status ? `?status=${status}` : ''}`)).json().maintenance_windows as Json[]).map((w) => `${w.title}:${w.status}`);
    assert.deepEqual(await titles('upcoming'), ['sooner:upcoming', 'later:upcoming']);
    assert.deepEqual(await titles('active'), ['now:active']);
    assert.deepEqual(await titles('past'), ['doomed:cancelled']);
    assert.deepEqual(await titles(), ['later:upcoming', 'doomed:cancelled', 'sooner:upcoming', 'now:active'], 'latest start first');
    assert.deepEqual(await titles('all'), await titles());
    expectError(await ownApi('GET', `${BASE}?status=soon`), 400, 'VALIDATION_FAILED', 'status');
    const page = (await ownApi('GET', `${BASE}?status=all&limit=2&offset=1`)).json() as Json;
    assert.deepEqual([page.total, page.limit, page.offset, page.maintenance_windows.length], [4, 2, 1, 2]);

    t.clock.advance(HOUR);
    try {
      assert.deepEqual(await titles('active'), ['sooner:active']);
      assert.deepEqual(await titles('past'), ['now:ended', 'doomed:cancelled']);
      assert.equal((await ownApi('GET', `${BASE}/${later.id}`)).json().status, 'upcoming');
      assert.equal((await ownApi('GET', `${BASE}/${now.id}`)).json().status, 'ended');
      assert.equal((await ownApi('GET', `${BASE}/${sooner.id}`)).json().status, 'active');
    } finally {
      t.clock.advance(-HOUR);
    }
  });

  it('PATCH edits an upcoming or running window; ends_at must stay in the future', async () => {
    const w = (await schedule({ components: [monitorA] })).json() as Json;
    const edited = await api('PATCH', `${BASE}/${w.id}`, { title: 'Bigger upgrade', components: [monitorB], suppress_alerts: false, description: null }, { 'x-keepwatch-client': 'iac' });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.deepEqual([edited.json().title, edited.json().components, edited.json().suppress_alerts, edited.json().description, edited.json().write_source],
      ['Bigger upgrade', [monitorB], false, null, 'iac']);
    expectError(await api('PATCH', `${BASE}/${w.id}`, { ends_at: at(-HOUR) }), 400, 'VALIDATION_FAILED', 'ends_at');
    expectError(await api('PATCH', `${BASE}/${w.id}`, { starts_at: at(3 * HOUR) }), 400, 'VALIDATION_FAILED', 'ends_at');
    const moved = (await api('PATCH', `${BASE}/${w.id}`, { starts_at: at(3 * HOUR), ends_at: at(4 * HOUR) })).json() as Json;
    assert.equal(moved.starts_at, new Date(moved.starts_at).toISOString());
    expectError(await api('PATCH', `${BASE}/${w.id}`, { components: ['0190a0a0-0000-7000-8000-000000000000'] }), 400, 'VALIDATION_FAILED', 'components[0]');

    // A PATCH keeps the state: an upcoming window's start stays to come, a running one's past.
    expectError(await api('PATCH', `${BASE}/${w.id}`, { starts_at: at(-60_000) }), 400, 'VALIDATION_FAILED', 'starts_at');
    assert.equal((await api('GET', `${BASE}/${w.id}`)).json().status, 'upcoming');
    const running = (await schedule({ starts_at: at(-HOUR) })).json() as Json;
    expectError(await api('PATCH', `${BASE}/${running.id}`, { starts_at: at(HOUR) }), 400, 'VALIDATION_FAILED', 'starts_at');
    const earlier = await api('PATCH', `${BASE}/${running.id}`, { starts_at: at(-2 * HOUR) });
    assert.equal(earlier.statusCode, 200, earlier.body);
    assert.equal(earlier.json().status, 'active');
  });

  it('PATCH with ends_at at or before now ends a running window at the server clock; then edits are refused', async () => {
    const w = (await schedule({ starts_at: at(-HOUR) })).json() as Json;
    const before = t.clock.now().getTime();
    const res = await api('PATCH', `${BASE}/${w.id}`, { ends_at: at(-30 * 60_000) });
    assert.equal(res.statusCode, 200, res.body);
    const ended = res.json() as Json;
    assert.equal(ended.status, 'ended');
    const endedAt = new Date(ended.ends_at).getTime();
    assert.ok(endedAt >= before && endedAt <= t.clock.now().getTime(), 'ended at the server clock, not the sent time');
    expectError(await api('PATCH', `${BASE}/${w.id}`, { title: 'again' }), 409, 'CONFLICT');
    expectError(await api('DELETE', `${BASE}/${w.id}`), 409, 'CONFLICT');
    const update = await api('POST', `${BASE}/${w.id}/updates`, { message: 'All done, thanks for waiting.' });
    assert.equal(update.statusCode, 201, 'a completed window still takes updates');
  });

  it('DELETE cancels as history with deleted_at and deleted_by; a cancelled window refuses edits and updates', async () => {
    const w = (await schedule()).json() as Json;
    assert.equal((await api('DELETE', `${BASE}/${w.id}`)).statusCode, 204);
    const kept = (await api('GET', `${BASE}/${w.id}`)).json() as Json;
    assert.equal(kept.status, 'cancelled');
    assert.equal(kept.deleted_by, tenant.userId);
    assert.ok(kept.deleted_at);
    expectError(await api('PATCH', `${BASE}/${w.id}`, { title: 'x' }), 422, 'MAINTENANCE_CANCELLED');
    expectError(await api('POST', `${BASE}/${w.id}/updates`, { message: 'x' }), 422, 'MAINTENANCE_CANCELLED');
    // Any update: one the service would refuse as blank is still 422, the window's state first.
    expectError(await api('POST', `${BASE}/${w.id}/updates`, { message: '   ' }), 422, 'MAINTENANCE_CANCELLED');
    expectError(await api('DELETE', `${BASE}/${w.id}`), 422, 'MAINTENANCE_CANCELLED');
    const running = (await schedule({ starts_at: at(-HOUR) })).json() as Json;
    assert.equal((await api('DELETE', `${BASE}/${running.id}`)).statusCode, 204, 'a running window can be cancelled');
  });

  it('updates: oldest first, trimmed, at most 50 (MAINTENANCE_UPDATE_LIMIT)', async () => {
    const w = (await schedule()).json() as Json;
    const first = (await api('POST', `${BASE}/${w.id}/updates`, { message: '  Starting soon  ' })).json() as Json;
    assert.deepEqual(first.updates.map((u: Json) => u.message), ['Starting soon']);
    expectError(await api('POST', `${BASE}/${w.id}/updates`, { message: '   ' }), 400, 'VALIDATION_FAILED', 'message');
    const other = client(t, (await createTenantWithToken(t)).token);
    expectError(await other('POST', `${BASE}/${w.id}/updates`, { message: '   ' }), 404, 'NOT_FOUND');
    expectError(await api('POST', `${BASE}/${w.id}/updates`, { message: 'x'.repeat(2001) }), 400, 'VALIDATION_FAILED', 'message');
    for (let i = 1; i < 50; i++) assert.equal((await api('POST', `${BASE}/${w.id}/updates`, { message: `update ${i}` })).statusCode, 201);
    expectError(await api('POST', `${BASE}/${w.id}/updates`, { message: 'one too many' }), 422, 'MAINTENANCE_UPDATE_LIMIT');
    const all = (await api('GET', `${BASE}/${w.id}`)).json() as Json;
    assert.equal(all.updates.length, 50);
    assert.equal(all.updates[49].message, 'update 49');
  });

  it('an update is announced to the registered listeners (status-page subscribers) in its own transaction', async () => {
    const heard: MaintenanceUpdateNews[] = [];
    const stop = onMaintenanceUpdate(async (tx, news) => {
      // Inside the transaction that records the update: the row is already visible to it.
      const [row] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM maintenance_updates WHERE id = $1', [news.updateId]);
      assert.equal(row!.n, 1);
      heard.push(news);
    });
    try {
      const w = (await schedule({ components: [monitorA] })).json() as Json;
      assert.equal((await api('POST', `${BASE}/${w.id}/updates`, { message: ' Rolling back ' })).statusCode, 201);
      assert.deepEqual(heard.map((n) => [n.orgId, n.windowId, n.targetIds, n.message]), [[tenant.orgId, w.id, [monitorA], 'Rolling back']]);
      const failing = onMaintenanceUpdate(async () => { throw new Error('subscriber outbox down'); });
      try {
        assert.equal((await api('POST', `${BASE}/${w.id}/updates`, { message: 'lost' })).statusCode, 500);
        assert.equal(((await api('GET', `${BASE}/${w.id}`)).json() as Json).updates.length, 1, 'the update and its announcement commit together or not at all');
      } finally {
        failing();
      }
    } finally {
      stop();
    }
  });

  it('a deleted monitor leaves the components', async () => {
    const doomed = (await api('POST', '/api/v1/targets', httpTarget({ name: 'doomed' }))).json().id;
    const w = (await schedule({ components: [monitorA, doomed] })).json() as Json;
    assert.equal((await api('DELETE', `/api/v1/targets/${doomed}`)).statusCode, 204);
    assert.deepEqual((await api('GET', `${BASE}/${w.id}`)).json().components, [monitorA]);
  });

  it('max_maintenance_windows counts windows not yet ended, under the account lock', async () => {
    const small = await createTenantWithToken(t, { plan: 'team' });
    const smallApi = client(t, small.token);
    await overrideCaps(t, small.accountId, { max_maintenance_windows: 3 });
    const results = await Promise.all(Array.from({ length: 8 }, () => schedule({}, smallApi)));
    assert.equal(results.filter((r) => r.statusCode === 201).length, 3);
    for (const r of results.filter((r) => r.statusCode !== 201)) assert.equal(expectError(r, 422, 'QUOTA_EXCEEDED').quota, 'max_maintenance_windows');
    const usage = (await smallApi('GET', `/api/v1/orgs/${small.orgId}/usage`)).json() as Json;
    assert.deepEqual(usage.quotas.max_maintenance_windows, { current: 3, limit: 3 });
    // A cancelled window frees its slot.
    const first = results.find((r) => r.statusCode === 201)!.json() as Json;
    assert.equal((await smallApi('DELETE', `${BASE}/${first.id}`)).statusCode, 204);
    assert.equal((await schedule({}, smallApi)).statusCode, 201);
  });

  it("another org's window is 404; scopes guard reads, writes and cancels", async () => {
    const other = await createTenantWithToken(t, { plan: 'team' });
    const theirs = (await schedule({}, client(t, other.token))).json() as Json;
    expectError(await api('GET', `${BASE}/${theirs.id}`), 404, 'NOT_FOUND');
    expectError(await api('PATCH', `${BASE}/${theirs.id}`, { title: 'x' }), 404, 'NOT_FOUND');
    expectError(await api('DELETE', `${BASE}/${theirs.id}`), 404, 'NOT_FOUND');
    expectError(await api('POST', `${BASE}/${theirs.id}/updates`, { message: 'x' }), 404, 'NOT_FOUND');
    const reader = client(t, await createToken(t, tenant.userId, { orgId: tenant.orgId, scopes: ['maintenance:read'] }));
    const writer = client(t, await createToken(t, tenant.userId, { orgId: tenant.orgId, scopes: ['maintenance:write'] }));
    assert.equal((await reader('GET', BASE)).statusCode, 200);
    expectError(await schedule({}, reader), 403, 'INSUFFICIENT_SCOPE');
    const mine = (await schedule({}, writer)).json() as Json;
    expectError(await writer('DELETE', `${BASE}/${mine.id}`), 403, 'INSUFFICIENT_SCOPE');
  });
});
