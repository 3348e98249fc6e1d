// Bulk create (monitoring-api.md, "Endpoints"; Limits): up to 10,000, each item a single create's
// rules, all-or-nothing with `targets[i].field`, quotas counted for the batch, ping URLs minted.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, overrideCaps, PUBLIC_URL, type Api, type Json } from './helpers.js';

describe('targets: bulk create', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Tenant & { token: string };
  before(async () => {
    t = await startTestApp({ config: { 'security.credentials_kek_base64': randomBytes(32).toString('base64') } });
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  const bulk = (targets: Json[], as: Api = api) => as('POST', '/api/v1/targets/bulk', { targets });
  const total = async (as: Api = api) => ((await as('GET', '/api/v1/targets?limit=1')).json() as Json).total as number;

  it('creates every item in request order, each as a single create would, credentials redacted, ping URLs minted', async () => {
    const res = await bulk([
      httpTarget({ name: 'one', tags: [' a ', 'a'] }, { bearer_token: 'tok-1' }),
      { name: 'two', check: { type: 'heartbeat' } },
      { name: 'three', check: { type: 'tcp', host: '93.184.216.34', port: 22 }, interval: 120 },
    ]);
    assert.equal(res.statusCode, 201, res.body);
    const made = res.json().targets as Json[];
    assert.deepEqual(made.map((x) => x.name), ['one', 'two', 'three']);
    assert.deepEqual(made[0]!.tags, ['a']);
    assert.equal(made[0]!.check.bearer_token, '***');
    assert.deepEqual(made[0]!.regions, ['local'], 'an item without regions shares the default set');
    assert.equal(made[2]!.interval, 120);
    for (const target of made) assert.deepEqual((await api('GET', `/api/v1/targets/${target.id}`)).json(), target);
    const [hb] = await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM heartbeats WHERE target_id = $1', [made[1]!.id]);
    assert.equal(hb!.n, 1);
    const [audits] = await t.services.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_log WHERE action = 'target.created' AND entity_id = ANY($1::text[]) AND details ? 'acting_user_id'`, [made.map((x) => x.id)]);
    assert.equal(audits!.n, 3, 'each row names the user acting through the token');
  });

  it('all or nothing: the first bad item is named as targets[i].field and nothing is written', async () => {
    const before = await total();
    const good = httpTarget();
    expectError(await bulk([good, good, httpTarget({}, { url: 'ftp://93.184.216.34/' })]), 400, 'VALIDATION_FAILED', 'targets[2].check.url');
    expectError(await bulk([good, { name: 'x', check: { type: 'tcp', host: '93.184.216.34', port: 0 } }]), 400, 'VALIDATION_FAILED', 'targets[1].check.port');
    expectError(await bulk([good, { ...good, colour: 'red' }]), 422, 'INVALID_JSON', 'targets[1].colour');
    expectError(await bulk([good, httpTarget({}, { url: 'http://10.0.0.1/' })]), 400, 'VALIDATION_FAILED', 'targets[1].check.url');
    expectError(await bulk([good, httpTarget({ interval: 5 })]), 422, 'MIN_CHECK_INTERVAL', 'targets[1].interval');
    expectError(await bulk([httpTarget({ alerts: [{ channel_id: '0190a0a0-0000-7000-8000-000000000000' }] })]), 400, 'INVALID_ALERT_CONFIG', 'targets[0].alerts[0].channel_id');
    expectError(await bulk([good, httpTarget({}, { url: `${PUBLIC_URL}{{missing}}` })]), 422, 'UNRESOLVED_VARIABLE', 'targets[1].check.url');
    expectError(await bulk([good, httpTarget({ regions: ['mars'] })]), 422, 'REGION_INVALID', 'targets[1].regions[0]');
    expectError(await bulk([]), 400, 'VALIDATION_FAILED', 'targets');
    assert.equal(await total(), before);
  });

  it('the batch is counted whole against max_targets and max_flow_checks', async () => {
    const small = await createTenantWithToken(t, { plan: 'team' });
    const smallApi = client(t, small.token);
    await overrideCaps(t, small.accountId, { max_targets: 4, max_flow_checks: 1 });
    assert.equal((await bulk([httpTarget()], smallApi)).statusCode, 201);
    assert.equal(expectError(await bulk([httpTarget(), httpTarget(), httpTarget(), httpTarget()], smallApi), 422, 'QUOTA_EXCEEDED').quota, 'max_targets');
    assert.equal(await total(smallApi), 1, 'nothing of a refused batch is written');
    const flow = { name: 'f', check: { type: 'flow', start_url: PUBLIC_URL, steps: [{ op: 'assert_text', contains: 'ok' }] } };
    assert.equal(expectError(await bulk([flow, flow], smallApi), 422, 'QUOTA_EXCEEDED').quota, 'max_flow_checks');
    assert.equal((await bulk([httpTarget(), httpTarget(), flow], smallApi)).statusCode, 201);
    assert.equal(await total(smallApi), 4);
  });

  it('more than 10,000 items is 413 BULK_TOO_LARGE', async () => {
    const item = { name: 'x', check: { type: 'manual' } };
    expectError(await bulk(Array.from({ length: 10_001 }, () => item)), 413, 'BULK_TOO_LARGE', 'targets');
  });
});
