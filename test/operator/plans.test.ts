// Operator plan moves and cap overrides (service-api.md, "Operator surface"; Events 2).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createTenantWithToken, OPERATOR_SECRET, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

type T = Tenant & { token: string };
interface Usage { plan: { id: string }; quotas: Record<string, { current: number; limit: number | 'infinity' }>; policy: Record<string, number | 'infinity'>; overrides: { columns: string[]; expires_at: string | null } }
interface ErrorBody { error: { code: string; field?: string } }

const UNKNOWN_ACCOUNT = '0190a7c2-6f1e-7a00-8000-0000000000aa';

describe('operator plan moves', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const usage = async (tenant: T): Promise<Usage> => {
    const res = await t.inject({ method: 'GET', url: `/api/v1/orgs/${tenant.orgId}/usage`, headers: bearer(tenant.token) });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Usage;
  };
  const events = (accountId: string) => t.services.db.query<{ event: string; reason: string; details: Record<string, unknown> }>(
    'SELECT event, reason, details FROM account_billing_events WHERE account_id = $1 ORDER BY id', [accountId]);
  const audit = (accountId: string) => t.services.db.query<{ action: string; actor_type: string; details: Record<string, unknown> }>(
    'SELECT action, actor_type, details FROM audit_log WHERE account_id = $1 AND action LIKE $2 ORDER BY id', [accountId, 'account.%']);

  it('moves the plan, shows it in usage at once, and records the event and audit row', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'free' });
    const before = await usage(tenant); // fills the plan cache
    assert.equal(before.plan.id, 'free');
    assert.equal(before.quotas.max_targets!.limit, 20);

    const res = await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'pro', reason: 'support ticket 42' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { account_id: tenant.accountId, plan_id: 'pro', fallback_plan_id: null, overrides: null, held: 0, released: 0 });

    const after = await usage(tenant);
    assert.equal(after.plan.id, 'pro');
    assert.equal(after.quotas.max_targets!.limit, 50);
    assert.equal(after.quotas.max_regions!.limit, 'infinity');
    const [row] = (await t.services.db.query<{ plan_id: string }>('SELECT plan_id FROM accounts WHERE id = $1', [tenant.accountId]));
    assert.equal(row!.plan_id, 'pro');

    const evs = await events(tenant.accountId);
    assert.deepEqual(evs.map((e) => [e.event, e.reason]), [['plan_changed', 'support ticket 42']]);
    assert.equal(evs[0]!.details.from, 'free');
    assert.equal(evs[0]!.details.to, 'pro');
    const rows = await audit(tenant.accountId);
    assert.deepEqual(rows.map((r) => [r.action, r.actor_type, r.details.reason]), [['account.plan_changed', 'operator', 'support ticket 42']]);
  });

  it('puts an account on any catalog plan, and stores the fallback', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    const res = await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'founding', reason: 'early adopter', fallback_plan_id: 'founding' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().plan_id, 'founding');
    assert.equal(res.json().fallback_plan_id, 'founding');
    assert.equal((await usage(tenant)).plan.id, 'founding');
    const kept = await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'pro', reason: 'moved on' });
    assert.equal(kept.json().fallback_plan_id, 'founding', 'omitted keeps the fallback');
    const cleared = await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'pro', reason: 'no fallback', fallback_plan_id: null });
    assert.equal(cleared.json().fallback_plan_id, null, 'null clears it');
    const empty = await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'pro', reason: 'typo', fallback_plan_id: '' });
    assert.deepEqual([empty.statusCode, empty.json().error.code, empty.json().error.field], [400, 'VALIDATION_FAILED', 'fallback_plan_id'], 'an empty id is no plan, not a 500');
  });

  for (const status of ['active', 'grace']) {
    it(`refuses a different plan while the subscription is ${status}, but takes a new fallback alone`, async () => {
      const tenant = await createTenantWithToken(t, { plan: 'pro' });
      await t.services.db.query('UPDATE accounts SET subscription_status = $2 WHERE id = $1', [tenant.accountId, status]);
      const refused = await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'team', reason: 'upsell' });
      assert.equal(refused.statusCode, 409);
      assert.equal((refused.json() as ErrorBody).error.code, 'SUBSCRIPTION_STATE');
      assert.equal((await usage(tenant)).plan.id, 'pro');
      assert.deepEqual(await events(tenant.accountId), []);

      const fallback = await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'pro', reason: 'keep founding after', fallback_plan_id: 'founding' });
      assert.equal(fallback.statusCode, 200, fallback.body);
      assert.equal(fallback.json().plan_id, 'pro');
      assert.equal(fallback.json().fallback_plan_id, 'founding');
      const [row] = await t.services.db.query<{ fallback_plan_id: string }>('SELECT fallback_plan_id FROM accounts WHERE id = $1', [tenant.accountId]);
      assert.equal(row!.fallback_plan_id, 'founding');
    });
  }

  it('moves the plan again once the subscription is over', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'pro' });
    await t.services.db.query(`UPDATE accounts SET subscription_status = 'canceled' WHERE id = $1`, [tenant.accountId]);
    const res = await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'free', reason: 'lapsed' });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('refuses an unknown plan (400 with field) and an unknown account (404)', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'free' });
    const bad = await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'platinum', reason: 'x' });
    assert.equal(bad.statusCode, 400);
    assert.equal((bad.json() as ErrorBody).error.field, 'plan_id');
    const badFallback = await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'pro', reason: 'x', fallback_plan_id: 'gold' });
    assert.equal(badFallback.statusCode, 400);
    assert.equal((badFallback.json() as ErrorBody).error.field, 'fallback_plan_id');
    assert.equal((await usage(tenant)).plan.id, 'free');

    const missing = await t.operator('PUT', `/operator/accounts/${UNKNOWN_ACCOUNT}/plan`, { plan_id: 'pro', reason: 'x' });
    assert.equal(missing.statusCode, 404);
    assert.equal((missing.json() as ErrorBody).error.code, 'NOT_FOUND');
    // An org id is not an account id.
    const byOrg = await t.operator('PUT', `/operator/accounts/${tenant.orgId}/plan`, { plan_id: 'pro', reason: 'x' });
    assert.equal(byOrg.statusCode, 404);
    assert.equal((await usage(tenant)).plan.id, 'free');
  });
});

describe('operator overrides', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const usage = async (tenant: T): Promise<Usage> => (await t.inject({ method: 'GET', url: `/api/v1/orgs/${tenant.orgId}/usage`, headers: bearer(tenant.token) })).json() as Usage;
  const put = (tenant: T, body: unknown) => t.operator('PUT', `/operator/accounts/${tenant.accountId}/overrides`, body);

  it('replaces the overrides whole, raising and lowering, and usage shows them', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'free' });
    await usage(tenant);
    const first = await put(tenant, { caps: { max_targets: 500, max_orgs: 0, min_check_interval_secs: 30 }, reason: 'pilot' });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), {
      account_id: tenant.accountId, plan_id: 'free', fallback_plan_id: null, held: 0, released: 0,
      overrides: { caps: { max_targets: 500, max_orgs: 0, min_check_interval_secs: 30 }, reason: 'pilot', expires_at: null },
    });
    let u = await usage(tenant);
    assert.equal(u.quotas.max_targets!.limit, 500);
    assert.equal(u.quotas.max_orgs!.limit, 0, 'an override may lower a cap');
    assert.equal(u.policy.min_check_interval_secs, 30);
    assert.deepEqual([...u.overrides.columns].sort(), ['max_orgs', 'max_targets', 'min_check_interval_secs']);

    const second = await put(tenant, { caps: { max_members: 7 }, reason: 'pilot, round two' });
    assert.equal(second.statusCode, 200);
    u = await usage(tenant);
    assert.equal(u.quotas.max_members!.limit, 7);
    assert.equal(u.quotas.max_targets!.limit, 20, 'a column left out of the second PUT is dropped');
    assert.equal(u.quotas.max_orgs!.limit, 1);
    assert.equal(u.policy.min_check_interval_secs, 180);
    assert.deepEqual(u.overrides.columns, ['max_members']);
  });

  const invalid: Array<[string, unknown]> = [
    ['max_gizmos', 3], ['max_targets', 1.5], ['max_targets', '3'], ['max_targets', -1], ['max_targets', null], ['max_targets', true],
    // Plan columns are PostgreSQL integer: a larger cap would make every create a 500.
    ['max_targets', 2_147_483_648], ['max_targets', 3_000_000_000], ['api_reads_per_minute', Number.MAX_SAFE_INTEGER],
  ];
  for (const [column, value] of invalid) {
    it(`refuses ${column}=${JSON.stringify(value)} with 400 PLAN_OVERRIDE_INVALID and stores nothing`, async () => {
      const tenant = await createTenantWithToken(t, { plan: 'free' });
      assert.equal((await put(tenant, { caps: { max_status_pages: 4 }, reason: 'earlier' })).statusCode, 200);
      const res = await put(tenant, { caps: { max_members: 9, [column]: value }, reason: 'bad' });
      assert.equal(res.statusCode, 400);
      const body = res.json() as ErrorBody;
      assert.equal(body.error.code, 'PLAN_OVERRIDE_INVALID');
      assert.equal(body.error.field, `caps.${column}`);
      const u = await usage(tenant);
      assert.equal(u.quotas.max_members!.limit, 3, 'the valid column of the refused request is not applied');
      assert.equal(u.quotas.max_status_pages!.limit, 4, 'the earlier overrides stay');
      const evs = await t.services.db.query('SELECT 1 FROM account_billing_events WHERE account_id = $1', [tenant.accountId]);
      assert.equal(evs.length, 1);
    });
  }

  it('refuses a cap JSON reads as infinite (1e309) with 400 PLAN_OVERRIDE_INVALID naming it', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'free' });
    for (const value of ['1e309', '-1e309']) {
      const res = await t.inject({
        method: 'PUT', url: `/operator/accounts/${tenant.accountId}/overrides`,
        headers: { authorization: `Bearer ${OPERATOR_SECRET}`, 'content-type': 'application/json' },
        payload: `{"caps": {"max_targets": ${value}}, "reason": "r"}`,
      });
      assert.equal(res.statusCode, 400, res.body);
      const { error } = res.json() as ErrorBody;
      assert.deepEqual([error.code, error.field], ['PLAN_OVERRIDE_INVALID', 'caps.max_targets']);
    }
    assert.equal((await usage(tenant)).overrides.columns.length, 0);
  });

  it('refuses caps that are missing or not an object with 400 PLAN_OVERRIDE_INVALID naming caps', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'free' });
    for (const body of [{ reason: 'r' }, { caps: [], reason: 'r' }, { caps: 'max_targets=5', reason: 'r' }, { caps: null, reason: 'r' }]) {
      const res = await put(tenant, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      const { error } = res.json() as ErrorBody;
      assert.deepEqual([error.code, error.field], ['PLAN_OVERRIDE_INVALID', 'caps'], JSON.stringify(body));
    }
  });

  it('accepts the largest cap a plan column holds, and creates still work under it', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'free' });
    const res = await put(tenant, { caps: { max_targets: 2_147_483_647, max_members: 2_147_483_647 }, reason: 'unlimited pilot' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await usage(tenant)).quotas.max_targets!.limit, 2_147_483_647);
    const created = await t.inject({
      method: 'POST', url: '/api/v1/targets', headers: bearer(tenant.token),
      payload: { name: 'cron', check: { type: 'heartbeat', period: 3_600_000 } },
    });
    assert.equal(created.statusCode, 201, created.body);
  });

  it('refuses a past or unstorable expires_at and an unknown account, and reads a leap second as the next', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'free' });
    const past = await put(tenant, { caps: { max_targets: 100 }, reason: 'x', expires_at: new Date(t.clock.now().getTime() - 60_000).toISOString() });
    assert.equal(past.statusCode, 400);
    assert.equal((past.json() as ErrorBody).error.field, 'expires_at');
    assert.equal((await usage(tenant)).quotas.max_targets!.limit, 20);
    // Past any storable year: refused, not a store error.
    const far = await put(tenant, { caps: { max_targets: 100 }, reason: 'x', expires_at: '9999-12-31T23:59:59-14:00' });
    assert.equal(far.statusCode, 400, far.body);
    assert.equal((far.json() as ErrorBody).error.field, 'expires_at');
    // A leap second is the next second.
    const leap = await put(tenant, { caps: { max_targets: 100 }, reason: 'x', expires_at: '2099-06-30T23:59:60Z' });
    assert.equal(leap.statusCode, 200, leap.body);
    assert.equal(Date.parse(leap.json().overrides.expires_at), Date.UTC(2099, 6, 1));
    const missing = await t.operator('PUT', `/operator/accounts/${UNKNOWN_ACCOUNT}/overrides`, { caps: { max_targets: 1 }, reason: 'x' });
    assert.equal(missing.statusCode, 404);
    assert.equal((await t.operator('DELETE', `/operator/accounts/${UNKNOWN_ACCOUNT}/overrides`)).statusCode, 404);
  });

  it('stops applying an override once its expires_at passes', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'free' });
    const expiresAt = new Date(t.clock.now().getTime() + 3_600_000);
    const res = await put(tenant, { caps: { max_targets: 100 }, reason: 'trial week', expires_at: expiresAt.toISOString() });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().overrides.expires_at, expiresAt.toISOString());
    let u = await usage(tenant);
    assert.equal(u.quotas.max_targets!.limit, 100);
    assert.equal(u.overrides.expires_at, expiresAt.toISOString());
    t.clock.advance(3_600_000 + 1_000);
    u = await usage(tenant);
    assert.equal(u.quotas.max_targets!.limit, 20);
    assert.deepEqual(u.overrides, { columns: [], expires_at: null });
  });

  it('stores a reason trimmed and refuses one of whitespace alone, on every operator plan route, changing nothing', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'free' });
    const refusals = [
      await put(tenant, { caps: { max_targets: 99 }, reason: '   ' }),
      await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'pro', reason: ' \t ' }),
      await t.operator('DELETE', `/operator/accounts/${tenant.accountId}/overrides?reason=%20%20`),
    ];
    for (const res of refusals) {
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual([(res.json() as ErrorBody).error.code, (res.json() as ErrorBody).error.field], ['VALIDATION_FAILED', 'reason']);
    }
    assert.equal((await usage(tenant)).quotas.max_targets!.limit, 20);
    assert.equal((await put(tenant, { caps: { max_targets: 99 }, reason: '  pilot  ' })).statusCode, 200);
    const evs = await t.services.db.query<{ reason: string }>('SELECT reason FROM account_billing_events WHERE account_id = $1', [tenant.accountId]);
    assert.deepEqual(evs.map((e) => e.reason), ['pilot']);
  });

  it('removes the overrides on DELETE, and records overrides_set and overrides_cleared with their reasons', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'free' });
    assert.equal((await put(tenant, { caps: { max_targets: 99 }, reason: 'big import' })).statusCode, 200);
    assert.equal((await usage(tenant)).quotas.max_targets!.limit, 99);
    const res = await t.operator('DELETE', `/operator/accounts/${tenant.accountId}/overrides?reason=import%20done`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().overrides, null);
    assert.equal((await usage(tenant)).quotas.max_targets!.limit, 20);
    assert.deepEqual(await t.services.db.query('SELECT caps FROM plan_overrides WHERE account_id = $1', [tenant.accountId]), []);

    const evs = await t.services.db.query<{ event: string; reason: string; details: { caps?: unknown } }>(
      'SELECT event, reason, details FROM account_billing_events WHERE account_id = $1 ORDER BY id', [tenant.accountId]);
    assert.deepEqual(evs.map((e) => [e.event, e.reason]), [['overrides_set', 'big import'], ['overrides_cleared', 'import done']]);
    assert.deepEqual(evs[0]!.details.caps, { max_targets: 99 });
    const auditRows = await t.services.db.query<{ action: string }>(
      `SELECT action FROM audit_log WHERE account_id = $1 AND action LIKE 'account.%' ORDER BY id`, [tenant.accountId]);
    assert.deepEqual(auditRows.map((r) => r.action), ['account.overrides_set', 'account.overrides_cleared']);
  });
});
