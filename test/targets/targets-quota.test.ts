// max_targets across the account's orgs, atomic under the account lock; max_flow_checks; usage.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, overrideCaps, PUBLIC_URL, type Json } from './helpers.js';

describe('targets: quotas', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  it('30 parallel creates at a cap of 5 leave exactly 5; the rest are 422 QUOTA_EXCEEDED max_targets', async () => {
    const a = await createTenantWithToken(t, { plan: 'team' });
    await overrideCaps(t, a.accountId, { max_targets: 5 });
    const api = client(t, a.token);
    const results = await Promise.all(Array.from({ length: 30 }, () => api('POST', '/api/v1/targets', httpTarget())));
    assert.equal(results.filter((r) => r.statusCode === 201).length, 5);
    for (const r of results.filter((x) => x.statusCode !== 201)) assert.equal(expectError(r, 422, 'QUOTA_EXCEEDED').quota, 'max_targets');
    assert.equal(((await api('GET', '/api/v1/targets')).json() as Json).total, 5);
    await t.services.quotaEvents.flush();
    const [events] = await t.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM quota_events WHERE event = 'quota_exceeded' AND quota = 'max_targets' AND account_id = $1`, [a.accountId]);
    assert.equal(events!.n, 25);
  });

  it("counts across the account's orgs and shows in the usage view", async () => {
    const a = await createTenantWithToken(t, { plan: 'team' });
    await overrideCaps(t, a.accountId, { max_targets: 2 });
    const api = client(t, a.token);
    assert.equal((await api('POST', '/api/v1/targets', httpTarget())).statusCode, 201);
    // A second org of the same account, inserted directly: the org API is not part of this domain.
    const orgId = '01900000-0000-7000-8000-000000000001';
    await t.services.db.query(`INSERT INTO orgs (id, account_id, slug, name) VALUES ($1, $2, 'second-org-q', 'Second')`, [orgId, a.accountId]);
    await t.services.db.query(`INSERT INTO targets (id, org_id, account_id, name, kind, check_spec, interval_secs, write_source)
      VALUES ('01900000-0000-7000-8000-000000000002', $1, $2, 'other', 'manual', '{"type":"manual"}', 60, 'api')`, [orgId, a.accountId]);
    expectError(await api('POST', '/api/v1/targets', httpTarget()), 422, 'QUOTA_EXCEEDED');
    const usage = (await api('GET', `/api/v1/orgs/${a.orgId}/usage`)).json() as Json;
    assert.deepEqual(usage.quotas.max_targets, { current: 2, limit: 2 });
    assert.deepEqual(usage.quotas.max_flow_checks, { current: 0, limit: 10 });
  });

  it('max_flow_checks caps flows', async () => {
    const a = await createTenantWithToken(t, { plan: 'founding' });
    const api = client(t, a.token);
    const flow = { name: 'f', check: { type: 'flow', start_url: PUBLIC_URL, steps: [{ op: 'assert_url', contains: 'x' }] } };
    assert.equal((await api('POST', '/api/v1/targets', flow)).statusCode, 201);
    assert.equal(expectError(await api('POST', '/api/v1/targets', flow), 422, 'QUOTA_EXCEEDED').quota, 'max_flow_checks');
    assert.equal((await api('POST', '/api/v1/targets', httpTarget())).statusCode, 201);
  });

  it('a flow stays editable after the plan drops flows; a new one is 403 FLOW_CHECKS_DISABLED, recorded in quota_events', async () => {
    const a = await createTenantWithToken(t, { plan: 'founding' });
    const api = client(t, a.token);
    const flow = { name: 'f', check: { type: 'flow', start_url: PUBLIC_URL, steps: [{ op: 'assert_url', contains: 'x' }] } };
    const created = (await api('POST', '/api/v1/targets', flow)).json() as Json;
    await overrideCaps(t, a.accountId, { max_flow_checks: 0 });
    expectError(await api('POST', '/api/v1/targets', flow), 403, 'FLOW_CHECKS_DISABLED');
    expectError(await api('POST', '/api/v1/targets/bulk', { targets: [flow] }), 403, 'FLOW_CHECKS_DISABLED', 'targets[0]');
    await t.services.quotaEvents.flush();
    const events = await t.services.db.query<{ event: string; details: { limit: number } }>(
      `SELECT event, details FROM quota_events WHERE quota = 'max_flow_checks' AND account_id = $1`, [a.accountId]);
    assert.deepEqual(events.map((e) => [e.event, e.details.limit]), [['quota_exceeded', 0], ['quota_exceeded', 0]], 'each refusal is recorded (Events 6)');
    const patched = await api('PATCH', `/api/v1/targets/${created.id}`, { name: 'g', check: { ...flow.check, timeout: 60000 } });
    assert.equal(patched.statusCode, 200, patched.body);
  });

  it('an interval below the plan floor is recorded in quota_events as a min_check_interval_secs refusal; below the kind floor alone, not', async () => {
    const a = await createTenantWithToken(t, { plan: 'team' });
    await overrideCaps(t, a.accountId, { min_check_interval_secs: 120 });
    const api = client(t, a.token);
    expectError(await api('POST', '/api/v1/targets', httpTarget({ interval: 60 })), 422, 'MIN_CHECK_INTERVAL', 'interval');
    const id = ((await api('POST', '/api/v1/targets', httpTarget({ interval: 300 }))).json() as Json).id as string;
    expectError(await api('PATCH', `/api/v1/targets/${id}`, { interval: 90 }), 422, 'MIN_CHECK_INTERVAL', 'interval');
    expectError(await api('POST', '/api/v1/targets/bulk-action', { action: 'set-interval', ids: [id], interval: 100 }), 422, 'MIN_CHECK_INTERVAL', 'ids[0]');
    const tls = { name: 'c', check: { type: 'tls_cert', host: '93.184.216.34' }, interval: 3599 };
    expectError(await api('POST', '/api/v1/targets', tls), 422, 'MIN_CHECK_INTERVAL', 'interval');
    await t.services.quotaEvents.flush();
    const events = await t.services.db.query<{ event: string; details: Json }>(
      `SELECT event, details FROM quota_events WHERE quota = 'min_check_interval_secs' AND account_id = $1 ORDER BY id`, [a.accountId]);
    assert.deepEqual(events.map((e) => [e.event, e.details.limit, e.details.requested]), [['quota_exceeded', 120, 60], ['quota_exceeded', 120, 90], ['quota_exceeded', 120, 100]]);
  });
});
