// Region placement on targets (monitoring-api.md, "Region rules", flow check spec): probed kinds
// need at least one region, and a flow runs only where a browser engine is (clamped; none is 422).
// GET .../regions reports the regions that serve the monitor after the plan's cap (service-api.md, "Limits" 4).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, overrideCaps, PUBLIC_URL, type Api, type Json } from './helpers.js';

const flowTarget = (extra: Json = {}): Json => ({
  name: 'journey', check: { type: 'flow', start_url: PUBLIC_URL, steps: [{ op: 'assert_url', contains: '/' }] }, ...extra,
});

describe('targets: regions', () => {
  let t: TestApp;
  let api: Api;
  const region = async (id: string, body: Json) => {
    const res = await t.operator('POST', '/operator/regions', { id, name: id, ...body });
    assert.equal(res.statusCode, 201, res.body);
  };
  const setFlowCapable = async (id: string, flow_capable: boolean) => {
    assert.equal((await t.operator('PATCH', `/operator/regions/${id}`, { flow_capable })).statusCode, 200);
  };
  before(async () => {
    t = await startTestApp();
    api = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
    await region('eu', { default_selected: true, flow_capable: false });
    await region('us', { default_selected: false, flow_capable: true });
  });
  after(async () => { await t.close(); });

  it('an empty set is refused on probed kinds (only heartbeat and manual may name none)', async () => {
    expectError(await api('POST', '/api/v1/targets', httpTarget({ regions: [] })), 422, 'REGION_INVALID', 'regions');
    const id = (await api('POST', '/api/v1/targets', httpTarget())).json().id as string;
    expectError(await api('PUT', `/api/v1/targets/${id}/regions`, { regions: [] }), 422, 'REGION_INVALID', 'regions');
    expectError(await api('PATCH', `/api/v1/targets/${id}`, { regions: [] }), 422, 'REGION_INVALID', 'regions');
    const hb = await api('POST', '/api/v1/targets', { name: 'cron', check: { type: 'heartbeat', period: 3_600_000 }, regions: [] });
    assert.equal(hb.statusCode, 201, hb.body);
  });

  it('GET /targets/{id}/regions reports the regions left after the plan cap, as the scheduler hands it out', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    const own = client(t, tenant.token);
    const created = await own('POST', '/api/v1/targets', httpTarget({ regions: ['us', 'eu', 'local'] }));
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    const serving = async () => ((await own('GET', `/api/v1/targets/${id}/regions`)).json().regions as Json[]).map((r) => r.id);
    assert.deepEqual(await serving(), ['us', 'eu', 'local'], 'no cap: every stored region, in stored order');
    await overrideCaps(t, tenant.accountId, { max_regions: 2 });
    assert.deepEqual(await serving(), ['eu', 'local'], 'default-selected first, then by id: us is dropped');
    await overrideCaps(t, tenant.accountId, { max_regions: 0 });
    assert.deepEqual(await serving(), [], 'only dropped regions: unmonitored');
    assert.deepEqual((await own('GET', `/api/v1/targets/${id}`)).json().regions, ['us', 'eu', 'local'], 'the stored set is kept');
  });

  it('more regions than max_regions is 422 QUOTA_EXCEEDED, recorded in quota_events', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    await overrideCaps(t, tenant.accountId, { max_regions: 1 });
    const api = client(t, tenant.token);
    const res = await api('POST', '/api/v1/targets', httpTarget({ regions: ['us', 'eu'] }));
    expectError(res, 422, 'QUOTA_EXCEEDED', 'regions');
    assert.equal(res.json().error.quota, 'max_regions');
    await t.services.quotaEvents.flush();
    const rows = await t.services.db.query<{ user_id: string; details: Json }>(
      `SELECT user_id, details FROM quota_events WHERE event = 'quota_exceeded' AND quota = 'max_regions' AND account_id = $1`, [tenant.accountId]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.user_id, tenant.userId);
    assert.equal(rows[0]!.details.limit, 1);
    assert.equal(rows[0]!.details.route, '/api/v1/targets');
    // Every route that sets regions names the field at fault.
    const one = (await api('POST', '/api/v1/targets', httpTarget({ regions: ['us'] }))).json() as Json;
    expectError(await api('PUT', `/api/v1/targets/${one.id}/regions`, { regions: ['us', 'eu'] }), 422, 'QUOTA_EXCEEDED', 'regions');
    expectError(await api('PATCH', `/api/v1/targets/${one.id}`, { regions: ['us', 'eu'] }), 422, 'QUOTA_EXCEEDED', 'regions');
    expectError(await api('POST', '/api/v1/targets/bulk', { targets: [httpTarget({ regions: ['us', 'eu'] })] }), 422, 'QUOTA_EXCEEDED', 'targets[0].regions');
  });

  it('a flow keeps only flow-capable regions, by default and when named', async () => {
    const byDefault = (await api('POST', '/api/v1/targets', flowTarget())).json() as Json;
    assert.deepEqual(byDefault.regions, ['local'], 'the flow-capable ones among the default set');
    const named = await api('POST', '/api/v1/targets', flowTarget({ regions: ['eu', 'us'] }));
    assert.equal(named.statusCode, 201, named.body);
    assert.deepEqual(named.json().regions, ['us']);
    const put = await api('PUT', `/api/v1/targets/${named.json().id}/regions`, { regions: ['eu', 'local'] });
    assert.deepEqual(put.json().regions.map((r: Json) => r.id), ['local']);
    const http = (await api('POST', '/api/v1/targets', httpTarget())).json() as Json;
    assert.deepEqual(http.regions.sort(), ['eu', 'local'], 'other kinds are not clamped');
  });

  it('a flow whose regions have no browser engine is 422 NO_FLOW_CAPABLE_AGENT', async () => {
    expectError(await api('POST', '/api/v1/targets', flowTarget({ regions: ['eu'] })), 422, 'NO_FLOW_CAPABLE_AGENT', 'regions');
    const id = (await api('POST', '/api/v1/targets', flowTarget())).json().id as string;
    expectError(await api('PUT', `/api/v1/targets/${id}/regions`, { regions: ['eu'] }), 422, 'NO_FLOW_CAPABLE_AGENT', 'regions');
    await setFlowCapable('local', false);
    try {
      const fallback = await api('POST', '/api/v1/targets', flowTarget());
      assert.deepEqual(fallback.json().regions, ['us'], 'no default region is flow-capable: any flow-capable one');
      await setFlowCapable('us', false);
      expectError(await api('POST', '/api/v1/targets', flowTarget()), 422, 'NO_FLOW_CAPABLE_AGENT', 'regions');
    } finally {
      await setFlowCapable('local', true);
      await setFlowCapable('us', true);
    }
  });
});

describe('targets: a node without flow.enabled', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp({ config: { 'flow.enabled': false } }); });
  after(async () => { await t.close(); });

  it('the built-in region takes no flow: 422 NO_FLOW_CAPABLE_AGENT', async () => {
    const api = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
    expectError(await api('POST', '/api/v1/targets', flowTarget()), 422, 'NO_FLOW_CAPABLE_AGENT', 'regions');
    expectError(await api('POST', '/api/v1/targets', flowTarget({ regions: ['local'] })), 422, 'NO_FLOW_CAPABLE_AGENT', 'regions');
    assert.equal((await api('POST', '/api/v1/targets', httpTarget())).statusCode, 201, 'other kinds still run there');
    // An agent's region keeps the capability its row gives: flow.enabled speaks for this process only.
    assert.equal((await t.operator('POST', '/operator/regions', { id: 'us', name: 'us', flow_capable: true })).statusCode, 201);
    const placed = await api('POST', '/api/v1/targets', flowTarget());
    assert.equal(placed.statusCode, 201, placed.body);
    assert.deepEqual(placed.json().regions, ['us']);
    // A one-shot check runs on this node, which runs no flows: refused as a create on it is.
    expectError(await api('POST', '/api/v1/targets/test', flowTarget().check), 422, 'NO_FLOW_CAPABLE_AGENT', 'type');
    expectError(await api('POST', `/api/v1/targets/${placed.json().id}/check-now`), 422, 'NO_FLOW_CAPABLE_AGENT');
    const [written] = await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM check_results WHERE target_id = $1', [placed.json().id]);
    assert.equal(written!.n, 0, 'nothing is written');
  });
});

describe('targets: default regions that leave none', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('a probed monitor created without regions is refused when no region would serve it, never probed from nowhere', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    const api = client(t, tenant.token);
    await overrideCaps(t, tenant.accountId, { max_regions: 0 });
    expectError(await api('POST', '/api/v1/targets', httpTarget()), 422, 'QUOTA_EXCEEDED');
    await overrideCaps(t, tenant.accountId, { max_regions: 5 });
    assert.equal((await t.operator('PATCH', '/operator/regions/local', { default_selected: false })).statusCode, 200);
    expectError(await api('POST', '/api/v1/targets', httpTarget()), 422, 'REGION_INVALID', 'regions');
    const named = await api('POST', '/api/v1/targets', httpTarget({ regions: ['local'] }));
    assert.equal(named.statusCode, 201, named.body);
    const heartbeat = await api('POST', '/api/v1/targets', { name: 'cron', check: { type: 'heartbeat', period: 3_600_000 } });
    assert.equal(heartbeat.statusCode, 201, heartbeat.body);
  });
});
