// Usage views (service-api.md: `GET /api/v1/orgs/{id}/usage`, `GET /api/v1/me/usage`; Limits 1).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FEATURE_FLAGS, POLICY_COLUMNS, QUOTA_COLUMNS, RATE_COLUMNS, SEED_PLANS } from '../../src/plans/catalog.js';
import { newId } from '../../src/shared/ids.js';
import { bearer, createTenant, createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, httpTarget } from '../targets/helpers.js';

interface Usage {
  org_id: string; account_id: string; plan: { id: string; name: string };
  quotas: Record<string, { current: number; limit: number | 'infinity' }>;
  policy: Record<string, number | 'infinity'>; rate_budgets: Record<string, number | 'infinity'>; features: Record<string, boolean>;
}
interface CurrentAndLimit { current: number; limit: number | 'infinity' }

const seed = (id: string) => SEED_PLANS.find((p) => p.id === id)!;

describe('GET /api/v1/orgs/{id}/usage', () => {
  let t: TestApp;
  let owner: Tenant & { token: string };
  let secondOrgId: string;
  let secondSlug: string;
  let member: Tenant;
  before(async () => {
    t = await startTestApp();
    owner = await createTenantWithToken(t, { plan: 'team' });
    // A second org of the same account, with the owner and another person as members.
    secondOrgId = newId();
    secondSlug = `second-${Date.now()}`;
    member = await createTenant(t, { plan: 'free' });
    await t.services.db.query('INSERT INTO orgs (id, account_id, slug, name) VALUES ($1, $2, $3, $4)', [secondOrgId, owner.accountId, secondSlug, 'Second']);
    await t.services.db.query(`INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'Owner'), ($1, $3, 'Member')`, [secondOrgId, owner.userId, member.userId]);
  });
  after(async () => { await t.close(); });

  const get = (orgId: string, token: string) => t.inject({ method: 'GET', url: `/api/v1/orgs/${orgId}/usage`, headers: bearer(token) });

  it('shows every quota column with current and limit, counted over the whole account', async () => {
    const res = await get(owner.orgId, owner.token);
    assert.equal(res.statusCode, 200, res.body);
    const usage = res.json() as Usage;
    assert.equal(usage.org_id, owner.orgId);
    assert.equal(usage.account_id, owner.accountId);
    assert.deepEqual(usage.plan, { id: 'team', name: 'Team' });
    assert.deepEqual(Object.keys(usage.quotas).sort(), [...QUOTA_COLUMNS].sort());
    const team = seed('team');
    for (const column of QUOTA_COLUMNS) {
      const q = usage.quotas[column]!;
      assert.deepEqual(Object.keys(q).sort(), ['current', 'limit'], column);
      assert.ok(Number.isInteger(q.current) && q.current >= 0, column);
      assert.equal(q.limit, team.caps[column] ?? 'infinity', column);
    }
    assert.equal(usage.quotas.max_regions!.limit, 'infinity');
    assert.deepEqual(Object.keys(usage.policy).sort(), [...POLICY_COLUMNS].sort());
    assert.equal(usage.policy.min_check_interval_secs, 30);
    for (const column of RATE_COLUMNS) assert.equal(usage.rate_budgets[column], team.caps[column], column);
    assert.equal(usage.rate_budgets.support_per_minute, 2);
    assert.deepEqual(Object.keys(usage.features).sort(), [...FEATURE_FLAGS].sort());

    // Account totals: both orgs, and the distinct people across them.
    assert.equal(usage.quotas.max_orgs!.current, 2);
    assert.equal(usage.quotas.max_members!.current, 2);
    assert.equal(usage.quotas.max_api_tokens_per_user!.current, 1);
  });

  it('gives a member of the second org the same account totals and the account owner\'s plan', async () => {
    const token = await createToken(t, member.userId, { orgId: secondOrgId });
    const res = await get(secondOrgId, token);
    assert.equal(res.statusCode, 200, res.body);
    const usage = res.json() as Usage;
    assert.equal(usage.account_id, owner.accountId);
    assert.equal(usage.plan.id, 'team');
    assert.equal(usage.quotas.max_orgs!.current, 2);
    assert.equal(usage.quotas.max_members!.current, 2);
    // The token cap is the member's own, as enforced: their home account's plan (free), not this org's.
    const me = (await t.inject({ method: 'GET', url: '/api/v1/me/usage', headers: bearer(token) })).json() as { api_tokens: { current: number; limit: number } };
    assert.deepEqual(usage.quotas.max_api_tokens_per_user, me.api_tokens);
    assert.equal(usage.quotas.max_api_tokens_per_user!.limit, seed('free').caps.max_api_tokens_per_user);
    assert.notEqual(seed('free').caps.max_api_tokens_per_user, seed('team').caps.max_api_tokens_per_user, 'the plans differ, so the test can tell');
  });

  it('reports the per-monitor max_regions as the most regions one monitor of the account holds', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    const regionsUsed = async () => ((await get(tenant.orgId, tenant.token)).json() as Usage).quotas.max_regions!.current;
    assert.equal(await regionsUsed(), 0);
    for (const id of ['usage-r2', 'usage-r3']) assert.equal((await t.operator('POST', '/operator/regions', { id, name: id })).statusCode, 201);
    const api = client(t, tenant.token);
    for (const regions of [['local'], ['local', 'usage-r2', 'usage-r3'], ['usage-r2']]) {
      assert.equal((await api('POST', '/api/v1/targets', httpTarget({ regions }))).statusCode, 201);
    }
    assert.equal(await regionsUsed(), 3);
  });

  it('shows "infinity" for an unlimited cap', async () => {
    const tenant = await createTenantWithToken(t, { plan: 'free' });
    assert.equal(((await get(tenant.orgId, tenant.token)).json() as Usage).quotas.max_regions!.limit, 3);
    await t.services.db.query(`UPDATE plans SET max_status_pages = NULL WHERE id = 'pro'`);
    await t.operator('PUT', `/operator/accounts/${tenant.accountId}/plan`, { plan_id: 'pro', reason: 'test' });
    const usage = (await get(tenant.orgId, tenant.token)).json() as Usage;
    assert.equal(usage.quotas.max_status_pages!.limit, 'infinity');
    assert.equal(usage.quotas.max_regions!.limit, 'infinity');
  });

  it('is 404 for a non-member, for a token bound to another org, and for a malformed id', async () => {
    const stranger = await createTenantWithToken(t);
    const res = await get(owner.orgId, stranger.token);
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error.code, 'NOT_FOUND');
    // An unbound token names an org in X-Service-Org (400 ORG_REQUIRED otherwise); the path still decides what is read.
    const unbound = await createToken(t, stranger.userId, { orgId: null });
    const asUnbound = (orgId: string, token: string, slug?: string) =>
      t.inject({ method: 'GET', url: `/api/v1/orgs/${orgId}/usage`, headers: { ...bearer(token), ...(slug && { 'x-service-org': slug }) } });
    assert.equal((await asUnbound(owner.orgId, unbound, stranger.orgSlug)).statusCode, 404);
    assert.equal((await asUnbound(owner.orgId, unbound)).json().error.code, 'ORG_REQUIRED');
    // The owner belongs to the second org, but this token is bound to the first.
    assert.equal((await get(secondOrgId, owner.token)).statusCode, 404);
    const ownerUnbound = await createToken(t, owner.userId, { orgId: null });
    assert.equal((await asUnbound(secondOrgId, ownerUnbound, secondSlug)).statusCode, 200);
    assert.equal((await get('not-a-uuid', owner.token)).statusCode, 404);
    assert.equal((await asUnbound(newId(), ownerUnbound, owner.orgSlug)).statusCode, 404);
  });
});

describe('GET /api/v1/me/usage', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const me = async (token: string): Promise<{ api_tokens: CurrentAndLimit; owned_orgs: CurrentAndLimit }> => {
    const res = await t.inject({ method: 'GET', url: '/api/v1/me/usage', headers: bearer(token) });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  it("reports the caller's live tokens and owned orgs against their plan", async () => {
    const tenant = await createTenantWithToken(t, { plan: 'founding' });
    let usage = await me(tenant.token);
    assert.deepEqual(usage, { api_tokens: { current: 1, limit: 7 }, owned_orgs: { current: 1, limit: 3 } });

    await createToken(t, tenant.userId, { expiresInDays: 1 });
    await t.services.db.query('INSERT INTO orgs (id, account_id, slug, name) VALUES ($1, $2, $3, $4)', [newId(), tenant.accountId, `own-${Date.now()}`, 'Own']);
    usage = await me(tenant.token);
    assert.deepEqual(usage, { api_tokens: { current: 2, limit: 7 }, owned_orgs: { current: 2, limit: 3 } });

    t.clock.advance(2 * 86_400_000);
    assert.equal((await me(tenant.token)).api_tokens.current, 1, 'an expired token no longer counts');
  });

  it("uses the member's own plan, not the plan of the org a token is bound to", async () => {
    const host = await createTenant(t, { plan: 'team' });
    const guest = await createTenant(t, { plan: 'free' });
    await t.services.db.query(`INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'Member')`, [host.orgId, guest.userId]);
    const bound = await createToken(t, guest.userId, { orgId: host.orgId });
    assert.deepEqual(await me(bound), { api_tokens: { current: 1, limit: 5 }, owned_orgs: { current: 1, limit: 1 } });
    const hostToken = await createToken(t, host.userId, { orgId: host.orgId });
    assert.deepEqual(await me(hostToken), { api_tokens: { current: 1, limit: 10 }, owned_orgs: { current: 1, limit: 10 } });
  });
});
