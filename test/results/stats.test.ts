// Uptime and latency over HTTP: raw and rollup reads agree on the same results, the stale cap,
// regions, retention, quantiles and phase means, and the refusals.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CheckResultRecord } from '../../src/results/types.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, expectError, httpTarget, type Api, type Json } from '../targets/helpers.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('uptime and latency', () => {
  let t: TestApp;
  let api: Api;
  let orgId: string;
  before(async () => {
    t = await startTestApp();
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
    orgId = tenant.orgId;
  });
  after(async () => { await t.close(); });

  const monitor = async (): Promise<string> => (await api('POST', '/api/v1/targets', httpTarget())).json().id as string;
  const write = async (targetId: string, results: Partial<CheckResultRecord>[]): Promise<void> => {
    for (const r of results) {
      t.services.results.push({ targetId, orgId, region: 'local', status: 'up', duration_ms: 10, error: null, checkedAt: new Date(), staleAfterMs: 3 * MIN, ...r });
    }
    await t.services.results.flush();
  };
  const get = async (path: string, query: Record<string, string>): Promise<Json> => {
    const res = await api('GET', `${path}?${new URLSearchParams(query)}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const iso = (ms: number): string => new Date(ms).toISOString();

  it('measures uptime by time, the same from raw results and from the rollups', async () => {
    const id = await monitor();
    const t0 = Math.floor((Date.now() - 2 * HOUR) / MIN) * MIN;
    // Two batches, so the second folds into rows and a cursor the first wrote.
    await write(id, [{ checkedAt: new Date(t0), status: 'up' }, { checkedAt: new Date(t0 + MIN), status: 'down', error: 'refused' }]);
    await write(id, [{ checkedAt: new Date(t0 + 2 * MIN), status: 'up' }, { checkedAt: new Date(t0 + 3 * MIN), status: 'up' }]);
    // up [0,1) down [1,2) up [2,3) up [3,6): the last stands three intervals, then no data.
    const expected = { uptime_pct: 83.333, up_secs: 300, down_secs: 60, degraded_secs: 0, error_secs: 0, checks: { total: 4, up: 3, degraded: 0, down: 1, error: 0 } };

    const raw = await get(`/api/v1/targets/${id}/uptime`, { from: iso(t0 - HOUR), to: iso(Date.now()) });
    assert.equal(raw.resolution, 'raw');
    assert.equal(raw.from, iso(t0 - HOUR));
    assert.deepEqual({ ...raw, from: undefined, to: undefined, resolution: undefined }, { ...expected, target_id: id, region: null, from: undefined, to: undefined, resolution: undefined });

    const hourly = await get(`/api/v1/targets/${id}/uptime`, { from: iso(t0 - 3 * DAY), to: iso(Date.now()) });
    assert.equal(hourly.resolution, 'hour');
    assert.equal(Date.parse(hourly.from) % HOUR, 0);
    assert.deepEqual({ ...hourly, from: undefined, to: undefined, resolution: undefined }, { ...expected, target_id: id, region: null, from: undefined, to: undefined, resolution: undefined });

    const daily = await get(`/api/v1/targets/${id}/uptime`, { from: iso(t0 - 60 * DAY), to: iso(Date.now()) });
    assert.equal(daily.resolution, 'day');
    assert.deepEqual([daily.uptime_pct, daily.up_secs, daily.down_secs], [83.333, 300, 60]);

    // A raw range starting inside the down stretch sees only its part of it.
    const part = await get(`/api/v1/targets/${id}/uptime`, { from: iso(t0 + 90_000), to: iso(t0 + 150_000) });
    assert.deepEqual([part.down_secs, part.up_secs, part.checks.total], [30, 30, 1]);
  });

  it('counts the stretch since the latest result as it stands, and nothing before the first', async () => {
    const id = await monitor();
    const empty = await get(`/api/v1/targets/${id}/uptime`, {});
    assert.deepEqual([empty.uptime_pct, empty.checks.total, empty.up_secs], [null, 0, 0]);
    const t0 = Date.now() - 30_000;
    await write(id, [{ checkedAt: new Date(t0), status: 'down', error: 'refused' }]);
    const raw = await get(`/api/v1/targets/${id}/uptime`, { from: iso(t0 - HOUR) });
    assert.equal(raw.uptime_pct, 0);
    assert.ok(raw.down_secs >= 29 && raw.down_secs <= 40, String(raw.down_secs));
    const rolled = await get(`/api/v1/targets/${id}/uptime`, { from: iso(t0 - 5 * DAY) });
    assert.ok(rolled.down_secs >= 29 && rolled.down_secs <= 40, String(rolled.down_secs));
  });

  it('serves latency quantiles, means, phases and a full bucket series', async () => {
    const id = await monitor();
    const t0 = Math.floor((Date.now() - HOUR) / MIN) * MIN;
    const fast = Array.from({ length: 10 }, (_, i) => ({ checkedAt: new Date(t0 + i * 1000), duration_ms: (i + 1) * 10, timings: { dns: 2, connect: 4 + i, first_byte: 1 } }));
    // Two batches into the same hour: the stored histogram is added to (kw_hist_add), not replaced.
    await write(id, fast.slice(0, 4));
    await write(id, [
      ...fast.slice(4),
      { checkedAt: new Date(t0 + 20_000), status: 'down' as const, duration_ms: 5000, error: 'timeout' },
      { checkedAt: new Date(t0 + 5 * MIN), duration_ms: 300, timings: { connect: 10 } },
    ]);
    const report = await get(`/api/v1/targets/${id}/latency`, { from: iso(t0), to: iso(t0 + HOUR) });
    assert.equal(report.resolution, 'raw');
    assert.equal(report.bucket_secs, 60);
    assert.equal(report.series.length, 60);
    assert.equal(report.series[0].at, iso(t0));
    const s = report.summary;
    assert.deepEqual([s.count, s.min_ms, s.max_ms, s.mean_ms], [11, 10, 300, 77.27]);
    assert.ok(Math.abs(s.p50_ms - 60) / 60 <= 0.022, String(s.p50_ms));
    assert.equal(s.p99_ms, 300);
    assert.deepEqual(s.phases, { dns_ms: 2, connect_ms: 8.64, tls_ms: null, first_byte_ms: 1, transfer_ms: null });
    assert.deepEqual([report.series[0].count, report.series[0].max_ms], [10, 100]);
    assert.deepEqual([report.series[1].count, report.series[1].p50_ms, report.series[1].phases.connect_ms], [0, null, null]);
    assert.deepEqual([report.series[5].count, report.series[5].p50_ms], [1, 300]);

    // An empty range has no bucket, though its instant falls inside one.
    const empty = await get(`/api/v1/targets/${id}/latency`, { from: iso(t0 + 30_000), to: iso(t0 + 30_000) });
    assert.deepEqual([empty.series, empty.summary.count], [[], 0]);

    const hourly = await get(`/api/v1/targets/${id}/latency`, { from: iso(t0 - 3 * DAY), to: iso(t0 + HOUR) });
    assert.equal(hourly.resolution, 'hour');
    assert.equal(hourly.bucket_secs, 3600);
    assert.deepEqual([hourly.summary.count, hourly.summary.min_ms, hourly.summary.max_ms, hourly.summary.mean_ms], [11, 10, 300, 77.27]);
    for (const q of ['p50_ms', 'p90_ms', 'p95_ms', 'p99_ms']) assert.equal(hourly.summary[q], s[q], q);
    assert.deepEqual(hourly.summary.phases, s.phases);
  });

  it('splits by region and filters to one', async () => {
    const id = await monitor();
    const t0 = Date.now() - 10 * MIN;
    await write(id, [
      { checkedAt: new Date(t0), region: 'eu-west', duration_ms: 20 },
      { checkedAt: new Date(t0 + MIN), region: 'eu-west', status: 'down', error: 'x' },
      { checkedAt: new Date(t0), region: 'us-east', duration_ms: 80 },
      { checkedAt: new Date(t0 + MIN), region: 'us-east', duration_ms: 90 },
    ]);
    const range = { from: iso(t0), to: iso(t0 + 2 * MIN) };
    const byRegion = await get(`/api/v1/targets/${id}/latency/by-region`, range);
    assert.deepEqual(byRegion.regions.map((r: Json) => [r.region, r.summary.count, r.summary.max_ms]), [['eu-west', 1, 20], ['us-east', 2, 90]]);
    const us = await get(`/api/v1/targets/${id}/latency`, { ...range, region: 'us-east' });
    assert.deepEqual([us.region, us.summary.count, us.summary.min_ms], ['us-east', 2, 80]);
    const pooled = await get(`/api/v1/targets/${id}/uptime`, range);
    assert.deepEqual([pooled.up_secs, pooled.down_secs, pooled.uptime_pct], [180, 60, 75]);
    const eu = await get(`/api/v1/targets/${id}/uptime`, { ...range, region: 'eu-west' });
    assert.deepEqual([eu.region, eu.up_secs, eu.down_secs, eu.uptime_pct], ['eu-west', 60, 60, 50]);
  });

  it('refuses a reversed range, hides other orgs\' monitors and keeps history to retention_days', async () => {
    const id = await monitor();
    const now = Date.now();
    expectError(await api('GET', `/api/v1/targets/${id}/uptime?from=${iso(now - MIN)}&to=${iso(now - 2 * MIN)}`), 400, 'VALIDATION_FAILED', 'from');
    expectError(await api('GET', `/api/v1/targets/${id}/latency?from=yesterday`), 400, 'VALIDATION_FAILED');
    const other = await createTenantWithToken(t, { plan: 'team' });
    for (const path of ['uptime', 'latency', 'latency/by-region']) {
      expectError(await client(t, other.token)('GET', `/api/v1/targets/${id}/${path}`), 404, 'NOT_FOUND');
    }
    const free = await createTenantWithToken(t, { plan: 'free' });
    const freeApi = client(t, free.token);
    const freeId = (await freeApi('POST', '/api/v1/targets', httpTarget())).json().id as string;
    const old = (await freeApi('GET', `/api/v1/targets/${freeId}/uptime?from=${iso(now - 200 * DAY)}`)).json();
    assert.ok(Date.parse(old.from) >= now - 31 * DAY, old.from);
  });

  it('reads a leap second as the next second, and refuses years it cannot store, in every history read', async () => {
    const id = await monitor();
    const year = new Date().getUTCFullYear() - 1;
    for (const path of ['results', 'uptime', 'latency', 'latency/by-region', 'incidents']) {
      const leap = await api('GET', `/api/v1/targets/${id}/${path}?from=${year}-12-31T23:59:60Z`);
      assert.equal(leap.statusCode, 200, `${path}: ${leap.body}`);
      expectError(await api('GET', `/api/v1/targets/${id}/${path}?from=0000-01-01T00:00:00Z`), 400, 'VALIDATION_FAILED', 'from');
      expectError(await api('GET', `/api/v1/targets/${id}/${path}?to=9999-12-31T23:59:59-14:00`), 400, 'VALIDATION_FAILED', 'to');
    }
    const uptime = (await api('GET', `/api/v1/targets/${id}/uptime?from=${year}-12-31T23:59:60Z`)).json();
    assert.equal(Date.parse(uptime.from), Date.UTC(year + 1, 0, 1));
  });

  it('answers a range wholly older than retention_days as empty, and widens no bucket past it', async () => {
    const free = await createTenantWithToken(t, { plan: 'free' });
    const freeApi = client(t, free.token);
    const id = (await freeApi('POST', '/api/v1/targets', httpTarget())).json().id as string;
    // The hardest hour of the day: 30 days back falls 30 s before a UTC midnight, the first whole
    // day a widened range reads from.
    t.clock.advance(DAY - ((t.clock.now().getTime() + 30_000) % DAY));
    const now = t.clock.now().getTime();
    // Free keeps 30 days readable: this result is just past that, inside the day bucket a widened
    // range would read. It stands for 30 s, so it ends before the readable window: a longer stretch
    // reaching into the window rightly counts there (CI failed once on a 3-minute one, at this hour).
    t.services.results.push({ targetId: id, orgId: free.orgId, region: 'local', status: 'down', duration_ms: 5, error: 'refused', checkedAt: new Date(now - 30 * DAY - MIN), staleAfterMs: 30_000 });
    await t.services.results.flush();

    const before = `from=${iso(now - 100 * DAY)}&to=${iso(now - 60 * DAY)}`;
    const results = await freeApi('GET', `/api/v1/targets/${id}/results?${before}`);
    assert.equal(results.statusCode, 200, results.body);
    assert.equal(results.json().total, 0);
    const uptime = await freeApi('GET', `/api/v1/targets/${id}/uptime?${before}`);
    assert.equal(uptime.statusCode, 200, uptime.body);
    assert.deepEqual([uptime.json().checks.total, uptime.json().uptime_pct], [0, null]);

    // `to` alone, older than retention: the default `from` follows it, so the window is empty, not reversed.
    for (const path of ['results', 'uptime', 'latency', 'latency/by-region', 'incidents']) {
      const res = await freeApi('GET', `/api/v1/targets/${id}/${path}?to=${iso(now - 60 * DAY)}`);
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
      if (path === 'results' || path === 'incidents') assert.equal(res.json().total, 0, path);
      if (path === 'uptime') assert.equal(res.json().checks.total, 0);
    }

    for (const path of ['uptime', 'latency']) {
      const all = (await freeApi('GET', `/api/v1/targets/${id}/${path}?from=${iso(now - 200 * DAY)}`)).json();
      assert.ok(Date.parse(all.from) >= now - 30 * DAY, `${path} from ${all.from}`);
      if (path === 'uptime') assert.deepEqual([all.checks.total, all.down_secs], [0, 0]);
    }
  });

  it('reads an id in the path in any case and echoes it as stored, lower case', async () => {
    const id = await monitor();
    for (const path of ['uptime', 'latency', 'latency/by-region']) {
      assert.equal((await get(`/api/v1/targets/${id.toUpperCase()}/${path}`, {})).target_id, id, path);
    }
    assert.equal((await api('GET', `/api/v1/targets/${id.toUpperCase()}`)).json().id, id);
  });

  it('counts a declared incident with counts_as_downtime as down time, in every resolution', async () => {
    const id = await monitor();
    const quiet = await monitor();
    const t0 = Math.floor((t.clock.now().getTime() - 30 * MIN) / MIN) * MIN;
    // One up result that stands for two hours: all of the range is up by the checks.
    await write(id, [{ checkedAt: new Date(t0), staleAfterMs: 2 * HOUR }]);
    const declare = async (counts: boolean) => {
      const res = await api('POST', '/api/v1/incidents', { title: `outage ${counts}`, severity: 'major', target_ids: [id, quiet], counts_as_downtime: counts });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const counted = await declare(true);
    const ignored = await declare(false);
    t.clock.advance(10 * MIN);
    for (const incident of [counted, ignored]) assert.equal((await api('POST', `/api/v1/incidents/${incident}/resolve`)).statusCode, 200);
    t.clock.advance(10 * MIN);
    const now = t.clock.now().getTime();
    const detail = (await api('GET', `/api/v1/incidents/${counted}`)).json();
    const spanMs = Date.parse(detail.ended_at) - Date.parse(detail.started_at);
    assert.ok(Math.abs(spanMs - 10 * MIN) < 5_000, String(spanMs));

    const raw = await get(`/api/v1/targets/${id}/uptime`, { from: iso(t0), to: iso(now) });
    assert.equal(raw.resolution, 'raw');
    assert.deepEqual([raw.down_secs, raw.up_secs, raw.checks.total], [spanMs / 1000, (now - t0 - spanMs) / 1000, 1]);
    assert.equal(raw.uptime_pct, Math.round(((now - t0 - spanMs) / (now - t0)) * 100_000) / 1000);

    const hourly = await get(`/api/v1/targets/${id}/uptime`, { from: iso(t0 - 3 * DAY), to: iso(now) });
    assert.equal(hourly.resolution, 'hour');
    assert.equal(hourly.down_secs, spanMs / 1000);
    assert.ok(hourly.uptime_pct < 100, String(hourly.uptime_pct));

    // A monitor with no result in the range is down for the declared span, and nothing else.
    const none = await get(`/api/v1/targets/${quiet}/uptime`, { from: iso(t0), to: iso(now) });
    assert.deepEqual([none.down_secs, none.up_secs, none.uptime_pct], [spanMs / 1000, 0, 0]);
    // Asked for a region that reported nothing, it is unprobed there: null, not 0 from the declared span.
    for (const region of ['local', 'nowhere']) {
      const filtered = await get(`/api/v1/targets/${quiet}/uptime`, { from: iso(t0), to: iso(now), region });
      assert.deepEqual([filtered.uptime_pct, filtered.down_secs, filtered.up_secs], [null, 0, 0], region);
    }
    const reported = await get(`/api/v1/targets/${id}/uptime`, { from: iso(t0), to: iso(now), region: 'local' });
    assert.equal(reported.down_secs, spanMs / 1000, 'a region that reported still carries the declared span');
  });

  it('a raw read charges declared downtime exactly, inside a stretch and beside the down time of the checks', async () => {
    const id = await monitor();
    // The span and the down check share one minute: a raw read's minute bucket holds both.
    t.clock.advance(MIN - (t.clock.now().getTime() % MIN) + 5_000);
    const start = t.clock.now().getTime();
    const incident = (await api('POST', '/api/v1/incidents', { title: 'maintenance gone wrong', severity: 'major', target_ids: [id], counts_as_downtime: true })).json();
    t.clock.advance(20_000);
    assert.equal((await api('POST', `/api/v1/incidents/${incident.id}/resolve`)).statusCode, 200);
    const detail = (await api('GET', `/api/v1/incidents/${incident.id}`)).json();
    const [from, to] = [Date.parse(detail.started_at), Date.parse(detail.ended_at)];
    assert.ok(from >= start && to > from);
    // Up before and through the span, down 10 s after it, then up again; the range ends 3 minutes on.
    await write(id, [
      { checkedAt: new Date(from - 10_000), status: 'up', staleAfterMs: 2 * HOUR },
      { checkedAt: new Date(to + 10_000), status: 'down', staleAfterMs: 2 * HOUR },
      { checkedAt: new Date(to + 20_000), status: 'up', staleAfterMs: 2 * HOUR },
    ]);
    t.clock.advance(4 * MIN);
    const end = to + 3 * MIN;
    const raw = await get(`/api/v1/targets/${id}/uptime`, { from: iso(from - 10_000), to: iso(end) });
    assert.equal(raw.resolution, 'raw');
    const span = to - from;
    const down = span + 10_000;
    const up = end - (from - 10_000) - down;
    assert.deepEqual([raw.down_secs, raw.up_secs], [down / 1000, up / 1000], 'the span is down, the stretches around it keep their own status');
    assert.equal(raw.uptime_pct, Math.round((up / (up + down)) * 100_000) / 1000);
  });
});
