// Alert config, intervals and regions of a target (monitoring-api.md, "Alert config", "Limits",
// "Region rules"; service-api.md, max_regions and min_check_interval_secs).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, overrideCaps, PUBLIC_URL, type Api, type Json } from './helpers.js';

const create = (api: Api, extra: Json = {}, check: Json = {}) => api('POST', '/api/v1/targets', httpTarget(extra, check));

describe('targets: alert config', () => {
  let t: TestApp;
  let api: Api;
  before(async () => {
    t = await startTestApp();
    api = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
  });
  after(async () => { await t.close(); });

  it('refuses each bound with INVALID_ALERT_CONFIG naming the field', async () => {
    expectError(await create(api, { alert_confirmations: 0 }), 400, 'INVALID_ALERT_CONFIG', 'alert_confirmations');
    expectError(await create(api, { renotify_interval_secs: 59 }), 400, 'INVALID_ALERT_CONFIG', 'renotify_interval_secs');
    expectError(await create(api, { recovery_period_secs: 1801 }), 400, 'INVALID_ALERT_CONFIG', 'recovery_period_secs');
    expectError(await create(api, { recovery_period_secs: -1 }), 400, 'INVALID_ALERT_CONFIG', 'recovery_period_secs');
    const ok = (await create(api, { alert_confirmations: 1, renotify_interval_secs: 0, recovery_period_secs: 1800, notify_recovery: false })).json() as Json;
    assert.deepEqual([ok.alert_confirmations, ok.renotify_interval_secs, ok.recovery_period_secs, ok.notify_recovery], [1, 0, 1800, false]);
    expectError(await api('PATCH', `/api/v1/targets/${ok.id}`, { renotify_interval_secs: 30 }), 400, 'INVALID_ALERT_CONFIG', 'renotify_interval_secs');
  });

  it('out-of-range values beyond any schema bound are INVALID_ALERT_CONFIG too, up to the documented ceilings', async () => {
    expectError(await create(api, { recovery_period_secs: 100_000 }), 400, 'INVALID_ALERT_CONFIG', 'recovery_period_secs');
    expectError(await create(api, { recovery_period_secs: 2 ** 53 }), 400, 'INVALID_ALERT_CONFIG', 'recovery_period_secs');
    expectError(await create(api, { alert_confirmations: 2 ** 31 }), 400, 'INVALID_ALERT_CONFIG', 'alert_confirmations');
    expectError(await create(api, { alert_confirmations: 2 ** 40 }), 400, 'INVALID_ALERT_CONFIG', 'alert_confirmations');
    expectError(await create(api, { renotify_interval_secs: 2 ** 31 }), 400, 'INVALID_ALERT_CONFIG', 'renotify_interval_secs');
    expectError(await create(api, { renotify_interval_secs: -60 }), 400, 'INVALID_ALERT_CONFIG', 'renotify_interval_secs');
    const edge = (await create(api, { alert_confirmations: 2 ** 31 - 1, renotify_interval_secs: 2 ** 31 - 1 })).json() as Json;
    assert.deepEqual([edge.alert_confirmations, edge.renotify_interval_secs], [2 ** 31 - 1, 2 ** 31 - 1], 'no ceiling below what the columns hold');
    expectError(await api('PATCH', `/api/v1/targets/${edge.id}`, { recovery_period_secs: 100_000 }), 400, 'INVALID_ALERT_CONFIG', 'recovery_period_secs');
  });

  it('refuses duplicate and unknown channel bindings', async () => {
    const id = randomUUID();
    expectError(await create(api, { alerts: [{ channel_id: id }, { channel_id: id }] }), 400, 'INVALID_ALERT_CONFIG', 'alerts[1].channel_id');
    expectError(await create(api, { alerts: [{ channel_id: id }] }), 400, 'INVALID_ALERT_CONFIG', 'alerts[0].channel_id');
    expectError(await create(api, { alerts: [{ channel_id: id, extra: 1 }] }), 422, 'INVALID_JSON', 'alerts[0].extra');
    // A malformed id names no channel: the binding rule answers it, not the schema.
    expectError(await create(api, { alerts: [{ channel_id: 'nope' }] }), 400, 'INVALID_ALERT_CONFIG', 'alerts[0].channel_id');
    const created = (await create(api)).json() as Json;
    expectError(await api('PATCH', `/api/v1/targets/${created.id}`, { alerts: [{ channel_id: '' }] }), 400, 'INVALID_ALERT_CONFIG', 'alerts[0].channel_id');
    assert.deepEqual(((await create(api, { alerts: [] })).json() as Json).alerts, []);
  });

  it('defaults recovery_period_secs per kind', async () => {
    const tls = (await api('POST', '/api/v1/targets', { name: 'c', check: { type: 'tls_cert', host: '93.184.216.34' } })).json() as Json;
    assert.deepEqual([tls.recovery_period_secs, tls.interval], [0, 43200]);
    const tcp = (await api('POST', '/api/v1/targets', { name: 'p', check: { type: 'tcp', host: '93.184.216.34', port: 22 } })).json() as Json;
    assert.equal(tcp.recovery_period_secs, 180);
  });

  it('region_policy: any, majority, all or {count: N} within the enabled regions', async () => {
    for (const policy of ['any', 'all', { count: 1 }]) {
      assert.deepEqual(((await create(api, { region_policy: policy })).json() as Json).region_policy, policy);
    }
    expectError(await create(api, { region_policy: { count: 0 } }), 422, 'INVALID_REGION_POLICY');
    expectError(await create(api, { region_policy: { count: 2 } }), 422, 'INVALID_REGION_POLICY');
    expectError(await create(api, { region_policy: 'most' }), 400, 'VALIDATION_FAILED', 'region_policy');
  });
});

describe('targets: intervals', () => {
  let t: TestApp;
  let free: Tenant & { token: string };
  let team: Api;
  before(async () => {
    t = await startTestApp();
    free = await createTenantWithToken(t, { plan: 'free' });
    team = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
  });
  after(async () => { await t.close(); });

  it('defaults per kind, with the plan floor', async () => {
    const api = client(t, free.token);
    const http = (await create(api)).json() as Json;
    assert.equal(http.interval, 180);
    const teamHttp = (await create(team)).json() as Json;
    assert.equal(teamHttp.interval, 60);
    const hb = (await team('POST', '/api/v1/targets', { name: 'h', check: { type: 'heartbeat', period: 600_000, grace: 0 } })).json() as Json;
    assert.equal(hb.interval, 60);
    const hbDay = (await team('POST', '/api/v1/targets', { name: 'h', check: { type: 'heartbeat' } })).json() as Json;
    assert.equal(hbDay.interval, 300);
    const hbFree = (await api('POST', '/api/v1/targets', { name: 'h', check: { type: 'heartbeat', period: 600_000, grace: 0 } })).json() as Json;
    assert.equal(hbFree.interval, 180);
  });

  it('below max(plan floor, kind floor) is 422 MIN_CHECK_INTERVAL on create and PATCH', async () => {
    expectError(await create(client(t, free.token), { interval: 179 }), 422, 'MIN_CHECK_INTERVAL', 'interval');
    expectError(await create(team, { interval: 29 }), 422, 'MIN_CHECK_INTERVAL', 'interval');
    assert.equal(((await create(team, { interval: 30 })).json() as Json).interval, 30);
    expectError(await team('POST', '/api/v1/targets', { name: 'c', check: { type: 'tls_cert', host: '93.184.216.34' }, interval: 3599 }), 422, 'MIN_CHECK_INTERVAL', 'interval');
    expectError(await team('POST', '/api/v1/targets', { name: 'f', check: { type: 'flow', start_url: PUBLIC_URL, steps: [{ op: 'assert_url', contains: 'x' }] }, interval: 299 }), 422, 'MIN_CHECK_INTERVAL', 'interval');
    const created = (await create(team, { interval: 120 })).json() as Json;
    expectError(await team('PATCH', `/api/v1/targets/${created.id}`, { interval: 10 }), 422, 'MIN_CHECK_INTERVAL', 'interval');
    // Zero and negative intervals are below every floor: the floor rule answers, not the schema.
    for (const interval of [0, -5]) {
      expectError(await create(team, { interval }), 422, 'MIN_CHECK_INTERVAL', 'interval');
      expectError(await team('PATCH', `/api/v1/targets/${created.id}`, { interval }), 422, 'MIN_CHECK_INTERVAL', 'interval');
      expectError(await team('POST', '/api/v1/targets', { name: 'm', check: { type: 'manual' }, interval }), 400, 'INVALID_INTERVAL', 'interval');
    }
    expectError(await create(team, { interval: 1.5 }), 400, 'VALIDATION_FAILED', 'interval');
    assert.equal(((await team('PATCH', `/api/v1/targets/${created.id}`, { interval: 45 })).json() as Json).interval, 45);
  });

  it('a PATCH that shrinks a heartbeat window lowers a coarser stored interval', async () => {
    const hb = (await team('POST', '/api/v1/targets', { name: 'h', check: { type: 'heartbeat' } })).json() as Json;
    assert.equal(hb.interval, 300);
    const patched = (await team('PATCH', `/api/v1/targets/${hb.id}`, { check: { type: 'heartbeat', period: 900_000, grace: 0 } })).json() as Json;
    assert.equal(patched.interval, 90);
  });
});

describe('targets: regions', () => {
  let t: TestApp;
  let free: Tenant & { token: string };
  before(async () => {
    t = await startTestApp();
    for (const [id, defaultSelected, enabled] of [['eu-west', true, true], ['us-east', true, true], ['ap-south', true, true], ['sa-east', false, true], ['off', true, false]] as const) {
      const res = await t.operator('POST', '/operator/regions', { id, name: id, default_selected: defaultSelected, enabled });
      assert.equal(res.statusCode, 201, res.body);
    }
    free = await createTenantWithToken(t, { plan: 'free' });
  });
  after(async () => { await t.close(); });

  it('omitted regions are the default-selected enabled set cut to max_regions', async () => {
    const created = (await create(client(t, free.token), { interval: 180 })).json() as Json;
    assert.deepEqual(created.regions, ['ap-south', 'eu-west', 'local']);
    const team = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
    assert.deepEqual(((await create(team)).json() as Json).regions, ['ap-south', 'eu-west', 'local', 'us-east']);
  });

  it('every id must be enabled; the set must fit max_regions', async () => {
    const api = client(t, free.token);
    expectError(await create(api, { interval: 180, regions: ['eu-west', 'off'] }), 422, 'REGION_INVALID', 'regions[1]');
    expectError(await create(api, { interval: 180, regions: ['nowhere'] }), 422, 'REGION_INVALID', 'regions[0]');
    const err = expectError(await create(api, { interval: 180, regions: ['eu-west', 'us-east', 'ap-south', 'sa-east'] }), 422, 'QUOTA_EXCEEDED');
    assert.equal(err.quota, 'max_regions');
    const created = (await create(api, { interval: 180, regions: ['sa-east', 'sa-east'] })).json() as Json;
    assert.deepEqual(created.regions, ['sa-east']);
    await overrideCaps(t, free.accountId, { max_regions: 4 });
    assert.equal((await create(api, { interval: 180, regions: ['eu-west', 'us-east', 'ap-south', 'sa-east'] })).statusCode, 201);
  });

  it('GET and PUT /targets/{id}/regions', async () => {
    const api = client(t, (await createTenantWithToken(t, { plan: 'free' })).token);
    const created = (await create(api, { interval: 180, regions: ['eu-west'] })).json() as Json;
    const got = (await api('GET', `/api/v1/targets/${created.id}/regions`)).json() as Json;
    assert.deepEqual(got, { regions: [{ id: 'eu-west', name: 'eu-west', city: null, country_code: null, continent: null, latitude: null, longitude: null }] });
    const put = await api('PUT', `/api/v1/targets/${created.id}/regions`, { regions: ['us-east', 'sa-east'] });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual((put.json() as Json).regions.map((r: Json) => r.id), ['us-east', 'sa-east']);
    assert.deepEqual(((await api('GET', `/api/v1/targets/${created.id}`)).json() as Json).regions, ['us-east', 'sa-east']);
    expectError(await api('PUT', `/api/v1/targets/${created.id}/regions`, { regions: ['off'] }), 422, 'REGION_INVALID', 'regions[0]');
    expectError(await api('PUT', `/api/v1/targets/${created.id}/regions`, { regions: ['eu-west', 'us-east', 'ap-south', 'sa-east'] }), 422, 'QUOTA_EXCEEDED');
    expectError(await api('PUT', `/api/v1/targets/${created.id}/regions`, { regions: ['x'], extra: 1 }), 422, 'INVALID_JSON', 'extra');
  });
});
