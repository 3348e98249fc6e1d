import assert from 'node:assert/strict';
import { createConnection, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { addRoute } from '../../src/http/route.js';
import { bearer, createTenant, createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';

const MINUTE = 60_000;
const REGIONS = '/api/v1/regions';
const PROBE = '/api/v1/rate-probe';

const UNKNOWN_ID = '0190b7c8-0000-7000-8000-000000000001';

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
    await t.app.listen({ port: 0, host: '127.0.0.1' });
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

  /** One request with the request line as written (inject normalises the target), over a real socket. */
  function sendRaw(requestTarget: string, method: string, token: string, body?: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    const { port } = t.app.server.address() as AddressInfo;
    return new Promise((ok, fail) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => { data += chunk; });
      socket.on('error', fail);
      socket.on('close', () => {
        const [head = '', rest = ''] = data.split('\r\n\r\n', 2);
        const [statusLine = '', ...lines] = head.split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        ok({ status: Number(statusLine.split(' ')[1]), headers, body: rest });
      });
      const bodyHeaders = body === undefined ? '' : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
      socket.write(`${method} ${requestTarget} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n${bodyHeaders}Connection: close\r\n\r\n${body ?? ''}`);
    });
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

  it('bulk, test and check-now budgets are charged by path, each apart from the write budget', async () => {
    const tenant = await createTenantWithToken(t);
    await limitAccount(tenant.accountId, { bulk_ops_per_minute: 2, test_now_per_minute: 1, check_now_per_minute: 1, api_writes_per_minute: 1 });
    const send = (url: string, payload: object) => t.inject({ method: 'POST', url, headers: bearer(tenant.token), payload });
    // Charged as the request arrives, whatever the answer (400, 404) turns out to be.
    assert.notEqual((await send('/api/v1/targets/bulk', { targets: [] })).statusCode, 429);
    assert.notEqual((await send('/api/v1/targets/bulk-action', { action: 'enable', ids: [] })).statusCode, 429);
    const dup = await send(`/api/v1/targets/${UNKNOWN_ID}/duplicate`, { copies: [{ name: 'x' }] });
    assert.equal(dup.statusCode, 429, 'bulk, bulk-action and duplicate share one budget');
    assert.equal((dup.json() as { error: { code: string } }).error.code, 'RATE_LIMITED');
    assert.ok(Number(dup.headers['retry-after']) >= 1);
    assert.deepEqual([(await send('/api/v1/targets/test', {})).statusCode, (await send('/api/v1/targets/test', {})).statusCode], [400, 429]);
    const checkNow = `/api/v1/targets/${UNKNOWN_ID}/check-now`;
    assert.deepEqual([(await send(checkNow, {})).statusCode, (await send(checkNow, {})).statusCode], [404, 429]);
    // None of them spent the write budget.
    assert.equal((await send('/api/v1/variables', { key: 'first', value: 'v' })).statusCode, 201);
    assert.equal((await send('/api/v1/variables', { key: 'second', value: 'v' })).statusCode, 429);
    const events = await quotaEvents(tenant.accountId);
    assert.deepEqual(events.map((e) => [e.event, e.quota, e.details.route]), [
      ['rate_limited', 'bulk_ops_per_minute', '/api/v1/targets/:id/duplicate'],
      ['rate_limited', 'test_now_per_minute', '/api/v1/targets/test'],
      ['rate_limited', 'check_now_per_minute', '/api/v1/targets/:id/check-now'],
      ['rate_limited', 'api_writes_per_minute', '/api/v1/variables'],
    ]);
  });

  it('an absolute-form request target or a fragment does not escape the budget of the route it reaches', async () => {
    const tenant = await createTenantWithToken(t);
    await limitAccount(tenant.accountId, { api_reads_per_minute: 2, test_now_per_minute: 1, api_writes_per_minute: 100 });
    assert.equal((await sendRaw(REGIONS, 'GET', tenant.token)).status, 200);
    assert.equal((await sendRaw(`http://127.0.0.1${REGIONS}`, 'GET', tenant.token)).status, 200);
    const refused = await sendRaw(`http://127.0.0.1${REGIONS}`, 'GET', tenant.token);
    assert.equal(refused.status, 429, refused.body);
    assert.equal((JSON.parse(refused.body) as { error: { code: string } }).error.code, 'RATE_LIMITED');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal((await sendRaw(`${REGIONS}#top`, 'GET', tenant.token)).status, 429);
    // The test budget: a fragment after /test is still the test endpoint.
    assert.equal((await sendRaw('/api/v1/targets/test#x', 'POST', tenant.token, '{}')).status, 400);
    assert.equal((await sendRaw('http://127.0.0.1/api/v1/targets/test', 'POST', tenant.token, '{}')).status, 429);
    const events = await quotaEvents(tenant.accountId);
    assert.deepEqual(events.map((e) => e.quota), ['api_reads_per_minute', 'api_reads_per_minute', 'test_now_per_minute']);
  });

  it('OPTIONS on an API path answers its methods in Allow and draws on the read budget', async () => {
    const tenant = await createTenantWithToken(t);
    await limitAccount(tenant.accountId, { api_reads_per_minute: 3 });
    const options = (url: string, token = tenant.token) => t.inject({ method: 'OPTIONS', url, headers: bearer(token) });
    const list = await options('/api/v1/targets?limit=5');
    assert.equal(list.statusCode, 204, list.body);
    assert.equal(list.headers.allow, 'GET, HEAD, OPTIONS, POST');
    const one = await options(`/api/v1/targets/${UNKNOWN_ID}`);
    assert.equal(one.headers.allow, 'DELETE, GET, HEAD, OPTIONS, PATCH');
    const unknown = await options('/api/v1/no-such-thing');
    assert.equal(unknown.statusCode, 404, 'a path no route serves is not found, once the token is checked and charged');
    const past = await options('/api/v1/targets');
    assert.equal(past.statusCode, 429);
    assert.ok(Number(past.headers['retry-after']) >= 1);
    assert.equal((await get(tenant.token)).statusCode, 429, 'OPTIONS spent the read budget');
    assert.deepEqual((await quotaEvents(tenant.accountId)).map((e) => e.quota), ['api_reads_per_minute', 'api_reads_per_minute']);
    assert.equal((await t.inject({ method: 'OPTIONS', url: '/api/v1/targets' })).statusCode, 401, 'OPTIONS needs the token as GET does');
  });

  it('a method an API path does not take is 405 METHOD_NOT_ALLOWED with Allow; elsewhere 404', async () => {
    const tenant = await createTenantWithToken(t);
    const put = await t.inject({ method: 'PUT', url: '/api/v1/targets', headers: bearer(tenant.token), payload: {} });
    assert.equal(put.statusCode, 405, put.body);
    assert.equal(put.headers.allow, 'GET, HEAD, OPTIONS, POST');
    assert.equal((put.json() as { error: { code: string } }).error.code, 'METHOD_NOT_ALLOWED');
    assert.equal((await t.inject({ method: 'PUT', url: '/api/v1/no-such-thing' })).statusCode, 404);
    // The operator surface stays invisible: no Allow to tell its routes apart from nothing.
    const operator = await t.inject({ method: 'PATCH', url: '/operator/regions' });
    assert.equal(operator.statusCode, 404);
    assert.equal(operator.headers.allow, undefined);
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
