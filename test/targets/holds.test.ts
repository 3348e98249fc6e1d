// Holds on the monitors pool (service-api.md, "Holds"): a cap below the pool holds the newest
// monitors (oldest keep their slots), each cap on its own; growing the cap or deleting rows
// releases them; every move is audited; a held monitor is not run; `enabled` and `updated_at` are
// never written.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { reconcileAllHolds, reconcileExpiredOverrides } from '../../src/plans/holds.js';
import { overCaps } from '../../src/targets/holds.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, type Api } from '../targets/helpers.js';

describe('the rule: which monitors a cap leaves without a slot', () => {
  const pool = [
    { id: 'a', kind: 'http' }, { id: 'b', kind: 'flow' }, { id: 'c', kind: 'http' }, { id: 'd', kind: 'flow' }, { id: 'e', kind: 'flow' },
  ];
  it('holds the newest beyond max_targets, and the newest flows beyond max_flow_checks, each on its own', () => {
    assert.deepEqual([...overCaps(pool, { max_targets: 3, max_flow_checks: null })].sort(), ['d', 'e']);
    assert.deepEqual([...overCaps(pool, { max_targets: null, max_flow_checks: 1 })].sort(), ['d', 'e']);
    assert.deepEqual([...overCaps(pool, { max_targets: 4, max_flow_checks: 2 })].sort(), ['e']);
    assert.deepEqual([...overCaps(pool, { max_targets: 2, max_flow_checks: 0 })].sort(), ['b', 'c', 'd', 'e']);
    assert.deepEqual([...overCaps(pool, { max_targets: null, max_flow_checks: null })], []);
  });
});

describe('monitor holds over HTTP', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const heldOf = async (ids: string[]): Promise<boolean[]> => {
    const rows = await t.services.db.query<{ id: string; held: boolean; enabled: boolean }>(
      'SELECT id, held_at IS NOT NULL AS held, enabled FROM targets WHERE id = ANY($1::uuid[])', [ids]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const r of rows) assert.equal(r.enabled, true, 'enabled is never written');
    return ids.map((id) => byId.get(id)!.held);
  };
  const audits = async (ids: string[]): Promise<string[]> => (await t.services.db.query<{ action: string }>(
    `SELECT action FROM audit_log WHERE entity_id = ANY($1::text[]) AND action LIKE 'target.plan_%' ORDER BY created_at, action`, [ids])).map((r) => r.action);
  const monitors = async (api: Api, n: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await api('POST', '/api/v1/targets', httpTarget({ name: `m${i}` }));
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id as string);
    }
    return ids;
  };
  const override = (accountId: string, caps: Record<string, number>) =>
    t.operator('PUT', `/operator/accounts/${accountId}/overrides`, { caps, reason: 'test' });

  it('an override below the pool holds the newest, and lifting it releases them; both audited', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    const api = client(t, tenant.token);
    const ids = await monitors(api, 3);
    const updatedAt = async () => Promise.all(ids.map(async (id) => ((await api('GET', `/api/v1/targets/${id}`)).json() as { updated_at: string }).updated_at));
    const edited = await updatedAt();

    const shrunk = await override(tenant.accountId, { max_targets: 1 });
    assert.equal(shrunk.statusCode, 200, shrunk.body);
    assert.deepEqual([shrunk.json().held, shrunk.json().released], [2, 0]);
    assert.deepEqual(await heldOf(ids), [false, true, true]);
    expectError(await api('POST', `/api/v1/targets/${ids[2]}/check-now`), 409, 'TARGET_HELD');
    assert.deepEqual(await audits(ids), ['target.plan_hold', 'target.plan_hold']);

    const again = await override(tenant.accountId, { max_targets: 1 });
    assert.deepEqual([again.json().held, again.json().released], [0, 0], 'a reconcile that changes nothing moves nothing');

    const lifted = await t.operator('DELETE', `/operator/accounts/${tenant.accountId}/overrides`);
    assert.equal(lifted.statusCode, 200, lifted.body);
    assert.deepEqual([lifted.json().held, lifted.json().released], [0, 2]);
    assert.deepEqual(await heldOf(ids), [false, false, false]);
    assert.deepEqual(await audits(ids), ['target.plan_hold', 'target.plan_hold', 'target.plan_release', 'target.plan_release']);
    assert.deepEqual(await updatedAt(), edited, 'a hold is no edit: updated_at stays');
  });

  it('deleting a monitor frees its slot for the oldest held one, single or bulk', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    const api = client(t, tenant.token);
    const ids = await monitors(api, 4);
    await override(tenant.accountId, { max_targets: 2 });
    assert.deepEqual(await heldOf(ids), [false, false, true, true]);

    assert.equal((await api('DELETE', `/api/v1/targets/${ids[0]}`)).statusCode, 204);
    assert.deepEqual(await heldOf(ids.slice(1)), [false, false, true], 'the oldest held one runs again');

    const bulk = await api('POST', '/api/v1/targets/bulk-action', { action: 'delete', ids: [ids[1]] });
    assert.equal(bulk.statusCode, 200, bulk.body);
    assert.deepEqual(await heldOf(ids.slice(2)), [false, false]);
  });

  it('the sweep applies what changed meanwhile, such as an override that has expired', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    const ids = await monitors(client(t, tenant.token), 2);
    await override(tenant.accountId, { max_targets: 1 });
    assert.deepEqual(await heldOf(ids), [false, true]);
    await t.services.db.query(`UPDATE plan_overrides SET expires_at = now() - interval '1 minute' WHERE account_id = $1`, [tenant.accountId]);

    const counts = await reconcileAllHolds(t.services);
    assert.ok(counts.released >= 1, JSON.stringify(counts));
    assert.deepEqual(await heldOf(ids), [false, false]);
  });

  it('an override that expires is applied within the minute: the expiry watch reconciles just the accounts it names', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    const ids = await monitors(client(t, tenant.token), 2);
    await override(tenant.accountId, { max_targets: 1 });
    assert.deepEqual(await heldOf(ids), [false, true]);
    const now = t.clock.now();
    await t.services.db.query(`UPDATE plan_overrides SET expires_at = $2 WHERE account_id = $1`, [tenant.accountId, new Date(now.getTime() - 30_000)]);

    const before = await reconcileExpiredOverrides(t.services, new Date(now.getTime() - 120_000), new Date(now.getTime() - 60_000));
    assert.deepEqual(before, { held: 0, released: 0 }, 'an expiry outside the window is not this pass\'s');
    assert.deepEqual(await heldOf(ids), [false, true]);
    const counts = await reconcileExpiredOverrides(t.services, new Date(now.getTime() - 60_000), now);
    assert.deepEqual(counts, { held: 0, released: 1 });
    assert.deepEqual(await heldOf(ids), [false, false]);
  });
});
