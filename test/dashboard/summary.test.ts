// GET /api/v1/dashboard/summary: the per-org rollup, its 5 s server-side cache keyed by org, Cache-Control, isolation, scope.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTenantWithToken, createToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, PUBLIC_URL, type Api, type Json } from '../targets/helpers.js';

const ZERO_KINDS = { http: 0, tcp: 0, ping: 0, dns: 0, heartbeat: 0, manual: 0, tls_cert: 0, domain_expiry: 0, flow: 0 };
const ZERO_STATES = { up: 0, degraded: 0, down: 0, error: 0, pending: 0 };
const URL = '/api/v1/dashboard/summary';

describe('GET /api/v1/dashboard/summary', () => {
  let t: TestApp;
  let a: Tenant & { token: string };
  let b: Tenant & { token: string };
  let api: Api;
  let apiB: Api;
  let created: string[] = [];
  before(async () => {
    t = await startTestApp();
    a = await createTenantWithToken(t, { plan: 'team' });
    b = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, a.token);
    apiB = client(t, b.token);
  });
  after(async () => { await t.close(); });

  /** Moves past the cache lifetime so the next read recomputes. */
  const expire = (): void => t.clock.advance(5_001);

  it('an org without targets: zeros, every kind present, Cache-Control private, max-age=5', async () => {
    const res = await api('GET', URL);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'private, max-age=5');
    assert.deepEqual(res.json(), { total: 0, enabled: 0, paused: 0, held: 0, by_kind: ZERO_KINDS, by_state: ZERO_STATES });
  });

  it('counts by kind, enabled, paused and held', async () => {
    const checks: Json[] = [
      { type: 'http', url: PUBLIC_URL }, { type: 'http', url: PUBLIC_URL }, { type: 'tcp', host: '93.184.216.34', port: 443 },
      { type: 'ping', host: '93.184.216.34' }, { type: 'dns', domain: 'example.com', record_type: 'A' }, { type: 'heartbeat' }, { type: 'manual' },
      { type: 'tls_cert', host: '93.184.216.34' }, { type: 'domain_expiry', domain: 'example.com' },
      { type: 'flow', start_url: PUBLIC_URL, steps: [{ op: 'assert_url', contains: 'x' }] },
    ];
    const ids: string[] = [];
    for (const check of checks) {
      const res = await api('POST', '/api/v1/targets', { name: check.type, check, ...(check.type === 'flow' && { interval: 300 }) });
      assert.equal(res.statusCode, 201, `${check.type}: ${res.body}`);
      ids.push((res.json() as Json).id);
    }
    // Pause two (one http, the tcp); the service holds one paused and one enabled target.
    for (const id of [ids[1], ids[2]]) assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { enabled: false })).statusCode, 200);
    await t.store.db.query('UPDATE targets SET held_at = now() WHERE org_id = $1 AND id = ANY($2::uuid[])', [a.orgId, [ids[2], ids[3]]]);
    expire();
    assert.deepEqual((await api('GET', URL)).json(), {
      total: 10, enabled: 8, paused: 2, held: 2,
      by_kind: { http: 2, tcp: 1, ping: 1, dns: 1, heartbeat: 1, manual: 1, tls_cert: 1, domain_expiry: 1, flow: 1 },
      by_state: { ...ZERO_STATES, up: 1, pending: 9 },
    });
    created = ids;
  });

  it('counts by the latest result of each monitor, from any region; a manual monitor is up until set otherwise', async () => {
    const [http1, http2, tcp, ping, dns] = created;
    const at = (secondsAgo: number) => new Date(t.clock.now().getTime() - secondsAgo * 1000);
    const result = (targetId: string, region: string, secondsAgo: number, status: 'up' | 'degraded' | 'down' | 'error') =>
      ({ targetId: targetId!, orgId: a.orgId, region, checkedAt: at(secondsAgo), status, duration_ms: 12, error: status === 'up' ? null : 'x' });
    // http1: down before, up now; http2: up in one region, then down in another; tcp degraded (and paused);
    // ping: error; dns: up then degraded.
    for (const r of [
      result(http1!, 'local', 120, 'down'), result(http1!, 'local', 60, 'up'),
      result(http2!, 'local', 90, 'up'), result(http2!, 'eu', 30, 'down'),
      result(tcp!, 'local', 10, 'degraded'), result(ping!, 'local', 10, 'error'),
      result(dns!, 'local', 300, 'up'), result(dns!, 'local', 200, 'degraded'),
    ]) t.services.results.push(r);
    await t.services.results.flush();
    expire();
    const summary = (await api('GET', URL)).json() as Json;
    assert.deepEqual(summary.by_state, { up: 2, degraded: 2, down: 1, error: 1, pending: 4 });
    const manual = created[6]!;
    assert.equal((await api('PUT', `/api/v1/targets/${manual}/state`, { status: 'down', note: 'outage' })).statusCode, 200);
    expire();
    assert.deepEqual(((await api('GET', URL)).json() as Json).by_state, { up: 1, degraded: 2, down: 2, error: 1, pending: 4 });
  });

  it('is cached 5 s per org: a new target shows only once the entry expires', async () => {
    expire();
    const before = (await api('GET', URL)).json() as Json;
    assert.equal((await api('POST', '/api/v1/targets', httpTarget())).statusCode, 201);
    // The test clock runs at real time plus the offset, so stay clear of the exact boundary.
    t.clock.advance(4_500);
    assert.deepEqual((await api('GET', URL)).json(), before, 'served from the cache within 5 s');
    t.clock.advance(600);
    const after = (await api('GET', URL)).json() as Json;
    assert.equal(after.total, before.total + 1, 'recomputed after 5 s');
    assert.equal(after.by_kind.http, before.by_kind.http + 1);
  });

  it("keys the cache by org: another org's entry is separate and never shows a's counts", async () => {
    expire();
    const aBefore = (await api('GET', URL)).json() as Json;
    t.clock.advance(2_000);
    // b's first read computes b's own (empty) rollup, though a's entry is fresh.
    assert.deepEqual((await apiB('GET', URL)).json(), { total: 0, enabled: 0, paused: 0, held: 0, by_kind: ZERO_KINDS, by_state: ZERO_STATES });
    // b adds a target: b's cached entry hides it, a's entry is untouched.
    assert.equal((await apiB('POST', '/api/v1/targets', httpTarget())).statusCode, 201);
    assert.equal(((await apiB('GET', URL)).json() as Json).total, 0);
    assert.deepEqual((await api('GET', URL)).json(), aBefore);
    // a's entry (5.5 s old) expires while b's (3.5 s old) holds.
    t.clock.advance(3_500);
    assert.deepEqual((await api('GET', URL)).json(), aBefore, "a recomputed: b's target is not counted for a");
    assert.equal(((await apiB('GET', URL)).json() as Json).total, 0, "b's entry is still fresh");
    t.clock.advance(2_000);
    assert.deepEqual((await apiB('GET', URL)).json(), { total: 1, enabled: 1, paused: 0, held: 0, by_kind: { ...ZERO_KINDS, http: 1 }, by_state: { ...ZERO_STATES, pending: 1 } });
  });

  it('needs targets:read', async () => {
    const none = client(t, await createToken(t, a.userId, { orgId: a.orgId, scopes: ['variables:read'] }));
    expectError(await none('GET', URL), 403, 'INSUFFICIENT_SCOPE');
    const deleteOnly = client(t, await createToken(t, a.userId, { orgId: a.orgId, scopes: ['targets:delete'] }));
    expectError(await deleteOnly('GET', URL), 403, 'INSUFFICIENT_SCOPE');
    const readOnly = client(t, await createToken(t, a.userId, { orgId: a.orgId, scopes: ['targets:read'] }));
    const res = await readOnly('GET', URL);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'private, max-age=5');
  });
});
