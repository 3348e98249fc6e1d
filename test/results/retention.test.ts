// The history sweep: raw results after raw_days (an account override included), hourly rollups
// moved into daily ones after 35 days, daily rollups after the plan's retention_days, idempotency keys after a day,
// heartbeat pings after 30 days and their output after 7; in batches until nothing old is left.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sweepHistory } from '../../src/results/index.js';
import { clearOutputsSql } from '../../src/results/retention.js';
import { newId } from '../../src/shared/ids.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { executedPlan } from '../helpers/plan.js';
import { client, httpTarget, overrideCaps, type Json } from '../targets/helpers.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;

describe('history sweep', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const tenantWithResults = async (plan: string, ages: number[]) => {
    const tenant = await createTenantWithToken(t, { plan });
    const id = (await client(t, tenant.token)('POST', '/api/v1/targets', httpTarget())).json().id as string;
    // Half past an hour: a result's stale window (3 minutes) never reaches the next hour's rollup,
    // whatever the time the test runs at.
    const halfPast = Math.floor(Date.now() / HOUR) * HOUR - HOUR / 2;
    for (const [i, days] of ages.entries()) {
      t.services.results.push({
        targetId: id, orgId: tenant.orgId, region: 'local', status: i % 2 ? 'up' : 'down', duration_ms: 5 + 40 * i, error: null,
        checkedAt: new Date(halfPast - days * DAY), staleAfterMs: 180_000,
      });
    }
    await t.services.results.flush();
    return { ...tenant, id };
  };
  const count = async (sql: string, id: string): Promise<number> =>
    (await t.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, [id]))[0]!.n;
  const ages = async (id: string) => ({
    raw: await count('check_results WHERE target_id = $1', id),
    hourly: await count(`result_rollups WHERE target_id = $1 AND granularity = 'hour'`, id),
    daily: await count(`result_rollups WHERE target_id = $1 AND granularity = 'day'`, id),
  });

  it('keeps each org what its plan keeps, and sweeps expired idempotency keys', async () => {
    const free = await tenantWithResults('free', [100, 40, 40, 40, 10, 1]);
    const team = await tenantWithResults('team', [100, 40, 40, 40, 10, 1]);
    const overridden = await tenantWithResults('team', [10, 1]);
    await overrideCaps(t, overridden.accountId, { raw_days: 7 });
    assert.deepEqual(await ages(team.id), { raw: 6, hourly: 4, daily: 0 });
    const history = (path: string) => client(t, team.token)('GET', `/api/v1/targets/${team.id}/${path}?from=${new Date(Date.now() - 120 * DAY).toISOString()}`);
    const [uptimeBefore, latencyBefore] = [(await history('uptime')).json(), (await history('latency')).json()];
    assert.equal(uptimeBefore.resolution, 'day');
    assert.equal(uptimeBefore.checks.total, 6);
    await t.services.db.query(
      `INSERT INTO idempotency_keys (org_id, key, request_hash, created_at) VALUES ($1, 'old', 'h', $2), ($1, 'fresh', 'h', $3)`,
      [team.orgId, new Date(Date.now() - 25 * 3_600_000), new Date(Date.now() - 3_600_000)]);

    const report = await sweepHistory(t.services.db, t.services.plans, t.clock, { batch: 2 });

    // raw_days 30 for both plans, and the newest result past it stays (its status stands until the
    // next); hourly rollups 35 days, then moved into days (the three results 40 days old share one
    // hour); daily rollups 30 days on free, 395 on team.
    assert.deepEqual(await ages(free.id), { raw: 3, hourly: 2, daily: 0 });
    assert.deepEqual(await ages(team.id), { raw: 3, hourly: 2, daily: 2 });
    assert.deepEqual(await ages(overridden.id), { raw: 2, hourly: 2, daily: 0 });
    assert.ok(report.results >= 3 + 3, JSON.stringify(report));
    assert.ok(report.hourly >= 2 + 2, JSON.stringify(report));
    // A daily read answers the same once hours are days: counts, time, latency and its quantiles.
    // The range ends now (inside today's bucket), so `to` moved on; all else is the same.
    const sameBut = (json: Json, before: Json) => assert.deepEqual({ ...json, to: before.to }, before);
    sameBut((await history('uptime')).json(), uptimeBefore);
    sameBut((await history('latency')).json(), latencyBefore);
    const [day40] = await t.services.db.query<{ checks_up: number; checks_down: number; latency_count: number; latency_min: number; latency_max: number }>(
      `SELECT checks_up, checks_down, latency_count, latency_min, latency_max FROM result_rollups
        WHERE target_id = $1 AND granularity = 'day' ORDER BY bucket_start DESC LIMIT 1`, [team.id]);
    assert.deepEqual({ ...day40 }, { checks_up: 2, checks_down: 1, latency_count: 2, latency_min: 45, latency_max: 125 });
    const keys = await t.services.db.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE org_id = $1', [team.orgId]);
    assert.deepEqual(keys.map((k) => k.key), ['fresh']);
    assert.deepEqual(await sweepHistory(t.services.db, t.services.plans, t.clock), { results: 0, orphans: 0, hourly: 0, daily: 0, idempotencyKeys: 0, pings: 0, outputs: 0 });
  });

  it("keeps each region's newest result past raw_days: a raw read of a recent range starts from its status", async () => {
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    const api = client(t, tenant.token);
    const id = (await api('POST', '/api/v1/targets', httpTarget())).json().id as string;
    const now = t.clock.now().getTime();
    // A verdict that stands until the next (as a heartbeat's or a manual state's does), in two regions.
    const result = (region: string, status: 'up' | 'down', daysAgo: number) => t.services.results.push({
      targetId: id, orgId: tenant.orgId, region, status, duration_ms: 5, error: null, checkedAt: new Date(now - daysAgo * DAY),
    });
    result('local', 'down', 50);
    result('local', 'up', 40);
    result('eu', 'up', 45);
    result('local', 'down', 12 / 24); // twelve hours ago
    await t.services.results.flush();
    const uptime = async () => (await api('GET', `/api/v1/targets/${id}/uptime`)).json();
    const before = await uptime();
    assert.equal(before.resolution, 'raw');

    const report = await sweepHistory(t.services.db, t.services.plans, t.clock);
    assert.ok(report.results >= 1, JSON.stringify(report));
    const left = await t.services.db.query<{ region: string; checked_at: Date }>(
      'SELECT region, checked_at FROM check_results WHERE target_id = $1 ORDER BY checked_at', [id]);
    assert.deepEqual(left.map((r) => [r.region, (now - r.checked_at.getTime()) / DAY]), [['eu', 45], ['local', 40], ['local', 0.5]],
      'the 50-day-old result goes; each region keeps its newest one past raw_days');
    // The last day reads the same: up from its start in both regions, down for the last twelve hours in one.
    const after = await uptime();
    for (const read of [before, after]) {
      assert.ok(Math.abs(read.up_secs - (24 + 12) * 3600) < 5 && Math.abs(read.down_secs - 12 * 3600) < 5, JSON.stringify(read));
      assert.deepEqual(read.checks, { total: 1, up: 0, degraded: 0, down: 1, error: 0 });
    }
    assert.deepEqual(await sweepHistory(t.services.db, t.services.plans, t.clock), { results: 0, orphans: 0, hourly: 0, daily: 0, idempotencyKeys: 0, pings: 0, outputs: 0 });
  });

  it('drops heartbeat output on a shorter clock than the ping', async () => {
    const tenant = await createTenantWithToken(t);
    const res = await client(t, tenant.token)('POST', '/api/v1/targets', { name: 'cron', check: { type: 'heartbeat', period: 3_600_000, grace: 0 } });
    const id = res.json().id as string;
    for (const days of [40, 10, 1]) {
      await t.services.db.query(
        `INSERT INTO heartbeat_pings (id, target_id, received_at, signal, counted, output) VALUES ($1, $2, $3, 'fail', true, $4)`,
        [newId(), id, new Date(Date.now() - days * DAY), `run ${days} days ago`]);
    }
    const report = await sweepHistory(t.services.db, t.services.plans, t.clock);
    assert.equal(report.pings, 1);
    assert.equal(report.outputs, 1);
    const left = await t.services.db.query<{ output: string | null }>('SELECT output FROM heartbeat_pings WHERE target_id = $1 ORDER BY received_at', [id]);
    assert.deepEqual(left.map((r) => r.output), [null, 'run 1 days ago']);
  });

  it("finds the output to clear without reading the pings that hold none", async () => {
    const tenant = await createTenantWithToken(t);
    const res = await client(t, tenant.token)('POST', '/api/v1/targets', { name: 'cron', check: { type: 'heartbeat', period: 3_600_000, grace: 0 } });
    const id = res.json().id as string;
    const old = Date.now() - 10 * DAY;
    await t.services.db.query(
      `INSERT INTO heartbeat_pings (id, target_id, received_at, signal, counted, output)
       SELECT gen_random_uuid(), $1, to_timestamp(($2::float8 + i * 60000) / 1000), 'success', true, CASE WHEN i = 0 THEN 'kept output' END
         FROM generate_series(0, 199) AS i`, [id, old]);
    // The plan the store would choose over a long log, forced on this small table.
    const plan = await executedPlan(t.services.db, clearOutputsSql(1000), [new Date(Date.now() - 7 * DAY)], ['seqscan', 'bitmapscan']);
    const scans = plan.filter((n) => n['Relation Name'] === 'heartbeat_pings' && n['Node Type'].endsWith('Scan'));
    assert.ok(scans.length > 0);
    for (const scan of scans) assert.equal(scan['Rows Removed by Filter'] ?? 0, 0, `${scan['Node Type']} read pings without output`);
    const [left] = await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM heartbeat_pings WHERE target_id = $1 AND output IS NOT NULL', [id]);
    assert.equal(left!.n, 0);
  });
});
