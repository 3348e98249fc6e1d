import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { addRoute } from '../../src/http/route.js';
import { bearer, createTenant, createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

const MINUTE = 60_000;
const REGIONS = '/api/v1/regions';
const PROBE = '/api/v1/rate-probe';

interface QuotaEventRow { event: string; quota: string; account_id: string; user_id: string; details: Record<string, unknown>; ip_hash: string | null }

describe('rate budgets over HTTP', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({
      // A write route under /api/v1 (the category comes from the method and path, not the route).
      extraRoutes: (app) => addRoute(app, {
        method: 'POST', url: PROBE, auth: 'user', orgScoped: false, tags: ['test'], summary: 'rate probe',
        response: { 200: Type.Object({ ok: Type.Boolean() }) },
        handler: async () => ({ ok: true }),
      }),
    });
  });
  after(async () => { await t.close(); });
  // Each test starts a second into a fresh minute, so no window ends halfway through it.
  beforeEach(() => {
    const ms = t.clock.now().getTime();
    t.clock.advance(MINUTE - (ms % MINUTE) + 1000);
  });

  async function limitAccount(accountId: string, caps: Record<string, number>): Promise<void> {
    const res = await t.operator('PUT', `/operator/accounts/${accountId}/overrides`, { caps, reason: 'test' });
    assert.equal(res.statusCode, 200, res.body);
  }

  const get = (token: string, url = REGIONS) => t.inject({ method: 'GET', url, headers: bearer(token) });
  const post = (token: string) => t.inject({ method: 'POST', url: PROBE, headers: bearer(token) });

  async function statuses(n: number, send: () => ReturnType<typeof get>): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await send()).statusCode);
    return out;
  }

  async function quotaEvents(accountId: string): Promise<QuotaEventRow[]> {
    await t.services.quotaEvents.flush();
    return t.store.db.query<QuotaEventRow>(
      'SELECT event, quota, account_id, user_id, details, ip_hash FROM quota_events WHERE account_id = $1 ORDER BY id', [accountId]);
  }

  it('the request past the read budget is 429 RATE_LIMITED with Retry-After, and is recorded', async () => {
    const tenant = await createTenantWithToken(t);
    await limitAccount(tenant.accountId, { api_reads_per_minute: 3 });
    assert.deepEqual(await statuses(3, () => get(tenant.token)), [200, 200, 200]);
    const res = await get(tenant.token);
    assert.equal(res.statusCode, 429);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    const expected = Math.ceil((MINUTE - (t.clock.now().getTime() % MINUTE)) / 1000);
    const retryAfter = Number(res.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && Math.abs(retryAfter - expected) <= 1, `Retry-After ${res.headers['retry-after']}, expected about ${expected}`);
    const body = res.json() as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'RATE_LIMITED');
    assert.equal(typeof body.error.message, 'string');

    const events = await quotaEvents(tenant.accountId);
    assert.equal(events.length, 1);
    const [event] = events;
    assert.equal(event!.event, 'rate_limited');
    assert.equal(event!.quota, 'api_reads_per_minute');
    assert.equal(event!.user_id, tenant.userId);
    assert.equal(event!.details.tier, 'account');
    assert.equal(event!.ip_hash, t.services.fingerprint.hash('127.0.0.1'), 'the IP is stored hashed');
    assert.notEqual(event!.ip_hash, '127.0.0.1');

    t.clock.advance(retryAfter * 1000);
    assert.equal((await get(tenant.token)).statusCode, 200, 'a new minute has a new budget');
  });

  it('the user tier limits one user across two accounts after the account tier admitted', async () => {
    const alice = await createTenantWithToken(t);
    const bob = await createTenant(t);
    await limitAccount(alice.accountId, { api_reads_per_minute: 3 });
    await limitAccount(bob.accountId, { api_reads_per_minute: 3 });
    // Alice is also a member of Bob's org (another account).
    await t.store.db.query(`INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'Member')`, [bob.orgId, alice.userId]);
    const aliceInBob = await createToken(t, alice.userId, { orgId: bob.orgId });
    const bobToken = await createToken(t, bob.userId, { orgId: bob.orgId });

    assert.deepEqual(await statuses(3, () => get(alice.token)), [200, 200, 200]);
    // Bob's account has its whole budget, yet Alice has spent hers.
    const res = await get(aliceInBob);
    assert.equal(res.statusCode, 429);
    assert.equal((res.json() as { error: { code: string } }).error.code, 'RATE_LIMITED');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    const [event] = await quotaEvents(bob.accountId);
    assert.equal(event?.details.tier, 'user');
    assert.equal(event?.user_id, alice.userId);

    // The refused request was not charged to Bob's account: Bob gets all three.
    assert.deepEqual(await statuses(4, () => get(bobToken)), [200, 200, 200, 429]);
  });

  it('writes and reads are separate budgets', async () => {
    const tenant = await createTenantWithToken(t);
    await limitAccount(tenant.accountId, { api_reads_per_minute: 3, api_writes_per_minute: 2 });
    assert.deepEqual(await statuses(4, () => get(tenant.token)), [200, 200, 200, 429]);
    assert.deepEqual(await statuses(3, () => post(tenant.token)), [200, 200, 429]);
    const events = await quotaEvents(tenant.accountId);
    assert.deepEqual(events.map((e) => e.quota), ['api_reads_per_minute', 'api_writes_per_minute']);
  });

  it('unauthenticated requests are not limited and spend no budget', async () => {
    const tenant = await createTenantWithToken(t);
    await limitAccount(tenant.accountId, { api_reads_per_minute: 3 });
    assert.deepEqual(new Set(await statuses(10, () => t.inject({ method: 'GET', url: REGIONS }))), new Set([401]));
    assert.deepEqual(new Set(await statuses(5, () => get(`sm_live_${'x'.repeat(43)}`))), new Set([401]));
    assert.deepEqual(await statuses(4, () => get(tenant.token)), [200, 200, 200, 429]);
  });

  it('a 429 never waits for the quota_events write', async () => {
    const tenant: Tenant & { token: string } = await createTenantWithToken(t);
    await limitAccount(tenant.accountId, { api_reads_per_minute: 1 });
    assert.equal((await get(tenant.token)).statusCode, 200);

    // Hold quota_events locked: any insert into it waits until the lock goes.
    let release!: () => void;
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => { locked = r; });
    const holder = t.store.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE quota_events IN ACCESS EXCLUSIVE MODE');
      locked();
      await new Promise<void>((r) => { release = r; });
    });
    await lockTaken;
    try {
      const res = await Promise.race([get(tenant.token), sleep(3000).then(() => null)]);
      assert.ok(res, 'the 429 came back while the quota_events table was locked');
      assert.equal(res.statusCode, 429);
      // The event is still queued behind the lock: the answer did not wait for it.
      const flushed = t.services.quotaEvents.flush().then(() => true);
      assert.equal(await Promise.race([flushed, sleep(200).then(() => false)]), false);
    } finally {
      release();
      await holder;
    }
    const events = await quotaEvents(tenant.accountId);
    assert.deepEqual(events.map((e) => e.event), ['rate_limited']);
  });
});
