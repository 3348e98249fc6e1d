// Which regions the incident engine counts: the monitor's regions that are enabled in the catalog.
// A region removed from the monitor leaves no streak behind to hold a policy or confirm an outage,
// and a disabled region (which reports nothing) does not keep an `any` incident from recovering.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CheckResultRecord } from '../../src/results/types.js';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, httpTarget, type Api, type Json } from '../targets/helpers.js';

const S = 1000;

describe('incident engine regions', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
    for (const id of ['r2', 'r3']) assert.equal((await t.operator('POST', '/operator/regions', { id, name: id })).statusCode, 201);
  });
  after(async () => { await t.close(); });

  const monitor = async (extra: Json): Promise<string> => {
    const res = await api('POST', '/api/v1/targets', httpTarget({ alert_confirmations: 2, recovery_period_secs: 0, ...extra }));
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };
  let next = Date.now() - 3600 * S;
  const feed = async (targetId: string, region: string, statuses: CheckResultRecord['status'][]): Promise<void> => {
    for (const status of statuses) {
      next += 10 * S;
      t.services.results.push({ targetId, orgId: tenant.orgId, region, status, duration_ms: 5, error: status === 'up' ? null : 'HTTP 500', checkedAt: new Date(next), staleAfterMs: 30 * S });
    }
    await t.services.results.flush();
  };
  const statuses = async (id: string): Promise<string[]> =>
    ((await api('GET', `/api/v1/incidents?target_id=${id}`)).json().incidents as Json[]).map((i) => i.status);
  const streakRegions = async (id: string): Promise<string[]> =>
    (await t.services.db.query<{ region: string }>('SELECT region FROM alert_streaks WHERE target_id = $1 ORDER BY region', [id])).map((r) => r.region);

  it('a region removed from the monitor: its old failing streak opens nothing and is dropped; its late results count for nothing', async () => {
    const id = await monitor({ region_policy: 'all', regions: ['local', 'r2'] });
    await feed(id, 'local', ['up', 'up']);
    await feed(id, 'r2', ['down', 'down']);
    assert.deepEqual(await statuses(id), [], 'policy all: one region down is not enough');
    assert.equal((await api('PUT', `/api/v1/targets/${id}/regions`, { regions: ['local'] })).statusCode, 200);

    await feed(id, 'local', ['up']);
    assert.deepEqual(await statuses(id), [], 'the removed region\'s streak does not make "all" agree');
    assert.deepEqual(await streakRegions(id), ['local']);
    await feed(id, 'r2', ['down', 'down']);
    assert.deepEqual(await statuses(id), [], 'a check still in flight from the removed region');
    assert.deepEqual(await streakRegions(id), ['local']);
    await feed(id, 'local', ['down', 'down']);
    assert.deepEqual(await statuses(id), ['open'], 'the region it runs in still confirms');
  });

  it('policy any with a disabled region: the incident recovers on the regions that report', async () => {
    const id = await monitor({ region_policy: 'any', regions: ['local', 'r3'] });
    assert.equal((await t.operator('PATCH', '/operator/regions/r3', { enabled: false })).statusCode, 200);
    try {
      await feed(id, 'local', ['down', 'down']);
      const [open] = await api('GET', `/api/v1/incidents?target_id=${id}`).then((r) => r.json().incidents as Json[]);
      assert.deepEqual([open!.status, open!.impact], ['open', 'major_outage'], 'every region that reports is down');
      await feed(id, 'local', ['up', 'up']);
      assert.deepEqual(await statuses(id), ['resolved']);
    } finally {
      await t.operator('PATCH', '/operator/regions/r3', { enabled: true });
    }
  });

  // A healthy monitor's up results skip the rule (engine.ts, monitorsToJudge) only when the rule
  // would change nothing; these are the cases where it would.
  it('a passing streak of a region removed from a healthy monitor is dropped with its next result', async () => {
    const id = await monitor({ region_policy: 'any', regions: ['local', 'r2'] });
    await feed(id, 'local', ['up', 'up']);
    await feed(id, 'r2', ['up', 'up']);
    assert.deepEqual(await streakRegions(id), ['local', 'r2']);
    assert.equal((await api('PUT', `/api/v1/targets/${id}/regions`, { regions: ['local'] })).statusCode, 200);
    await feed(id, 'local', ['up']);
    assert.deepEqual(await streakRegions(id), ['local']);

    // Swapped for another region: as many streaks as regions, but one of a region it left.
    await feed(id, 'local', ['up']);
    assert.equal((await api('PUT', `/api/v1/targets/${id}/regions`, { regions: ['local', 'r2'] })).statusCode, 200);
    await feed(id, 'r2', ['up', 'up']);
    assert.equal((await api('PUT', `/api/v1/targets/${id}/regions`, { regions: ['local', 'r3'] })).statusCode, 200);
    await feed(id, 'local', ['up']);
    assert.deepEqual(await streakRegions(id), ['local']);
  });

  it('a passing streak of a region disabled in the catalog is dropped with the healthy monitor\'s next result', async () => {
    // r2 has not reported yet, so the monitor has as many streaks as live regions once r3 is off.
    const id = await monitor({ region_policy: 'any', regions: ['local', 'r2', 'r3'] });
    await feed(id, 'local', ['up', 'up']);
    await feed(id, 'r3', ['up', 'up']);
    assert.equal((await t.operator('PATCH', '/operator/regions/r3', { enabled: false })).statusCode, 200);
    try {
      await feed(id, 'local', ['up']);
      assert.deepEqual(await streakRegions(id), ['local']);
    } finally {
      await t.operator('PATCH', '/operator/regions/r3', { enabled: true });
    }
  });

  it('raised confirmations: a healthy region keeps counting passes up to the new cap, so it counts towards a recovery', async () => {
    const id = await monitor({ region_policy: 'any', regions: ['local', 'r2'], alert_confirmations: 1 });
    await feed(id, 'local', ['up']);
    await feed(id, 'r2', ['up']);
    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { alert_confirmations: 2 })).statusCode, 200);
    await feed(id, 'local', ['up']);
    await feed(id, 'r2', ['down', 'down']);
    assert.deepEqual(await statuses(id), ['open']);
    // Recovered once both regions have passed twice: local did before the outage.
    await feed(id, 'r2', ['up', 'up']);
    assert.deepEqual(await statuses(id), ['resolved']);
  });

  it('a region added to a healthy monitor starts its streak with its first result', async () => {
    const id = await monitor({ region_policy: 'any', regions: ['local'] });
    await feed(id, 'local', ['up', 'up']);
    assert.equal((await api('PUT', `/api/v1/targets/${id}/regions`, { regions: ['local', 'r2'] })).statusCode, 200);
    await feed(id, 'r2', ['up']);
    assert.deepEqual(await streakRegions(id), ['local', 'r2']);
  });
});
