// Rollups are folded a while after their results (src/results/rollup-folder.ts): readers count the
// results not folded yet, a folder that starts takes what a stopped one left, two folders never
// count a result twice, and the history sweep keeps results until they are folded.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sweepHistory } from '../../src/results/index.js';
import { RollupFolder } from '../../src/results/rollup-folder.js';
import { RESULTS_AFTER_CURSOR } from '../../src/results/rollup-store.js';
import type { CheckResultRecord } from '../../src/results/types.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { executedPlan } from '../helpers/plan.js';
import { client, httpTarget, overrideCaps, type Api, type Json } from '../targets/helpers.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('rollup folder', () => {
  let t: TestApp;
  let api: Api;
  let tenant: Awaited<ReturnType<typeof createTenantWithToken>>;
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  const monitor = async (): Promise<string> => (await api('POST', '/api/v1/targets', httpTarget())).json().id as string;
  /** Written and committed, not folded: the folder waits FOLD_AFTER_MS before it folds them. */
  const writeUnfolded = async (targetId: string, results: Partial<CheckResultRecord>[]): Promise<void> => {
    const records = results.map((r) => ({ targetId, orgId: tenant.orgId, region: 'local', status: 'up' as const, duration_ms: 10, error: null, checkedAt: new Date(), staleAfterMs: 3 * MIN, ...r }));
    await t.services.db.transaction((tx) => t.services.results.writeNow(tx, ...records));
  };
  const checksFolded = async (id: string): Promise<number> =>
    (await t.services.db.query<{ n: number }>('SELECT coalesce(sum(checks_up + checks_down), 0)::int AS n FROM result_rollups WHERE target_id = $1', [id]))[0]!.n;
  const uptime = async (id: string, from: number): Promise<Json> => {
    const res = await api('GET', `/api/v1/targets/${id}/uptime?from=${new Date(from).toISOString()}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const fourResults = (t0: number): Partial<CheckResultRecord>[] => [
    { checkedAt: new Date(t0) }, { checkedAt: new Date(t0 + MIN), status: 'down', error: 'refused' },
    { checkedAt: new Date(t0 + 2 * MIN) }, { checkedAt: new Date(t0 + 3 * MIN) },
  ];

  it('an hourly read counts the results not folded yet, and the same once they are', async () => {
    const id = await monitor();
    const t0 = Math.floor((Date.now() - 2 * HOUR) / MIN) * MIN;
    await writeUnfolded(id, fourResults(t0).slice(0, 2));
    await writeUnfolded(id, fourResults(t0).slice(2));
    assert.equal(await checksFolded(id), 0);
    // up [0,1) down [1,2) up [2,3) up [3,6): the last stands three intervals.
    const expected = { resolution: 'hour', up_secs: 300, down_secs: 60, checks: { total: 4, up: 3, degraded: 0, down: 1, error: 0 } };
    const pick = (u: Json) => ({ resolution: u.resolution, up_secs: u.up_secs, down_secs: u.down_secs, checks: u.checks });
    assert.deepEqual(pick(await uptime(id, t0 - 3 * DAY)), expected);

    await t.services.results.rollups.flush();
    assert.equal(await checksFolded(id), 4);
    assert.deepEqual(pick(await uptime(id, t0 - 3 * DAY)), expected);
  });

  it('a folder that starts folds what a stopped one left; folding again counts nothing twice', async () => {
    const id = await monitor();
    await writeUnfolded(id, fourResults(Math.floor((Date.now() - HOUR) / MIN) * MIN));
    const restarted = new RollupFolder(t.services.db, t.services.log);
    restarted.start();
    await restarted.flush();
    restarted.stop();
    assert.equal(await checksFolded(id), 4);
    // The writer's own folder still had the monitor marked: it finds nothing after the cursor.
    await t.services.results.rollups.flush();
    assert.equal(await checksFolded(id), 4);
  });

  it('two folders folding the same monitor at once count each result once', async () => {
    const id = await monitor();
    await writeUnfolded(id, fourResults(Math.floor((Date.now() - HOUR) / MIN) * MIN));
    const folders = [new RollupFolder(t.services.db, t.services.log), new RollupFolder(t.services.db, t.services.log)];
    for (const folder of folders) folder.mark([{ targetId: id, region: 'local' }]);
    await Promise.all(folders.map((folder) => folder.flush()));
    assert.equal(await checksFolded(id), 4);
  });

  it("reads a pair's results after its cursor without reading the history before it", async () => {
    const id = await monitor();
    const t0 = Math.floor((Date.now() - 2 * DAY) / MIN) * MIN;
    await writeUnfolded(id, Array.from({ length: 60 }, (_, i) => ({ checkedAt: new Date(t0 + i * MIN) })));
    await t.services.results.rollups.flush();
    await writeUnfolded(id, [{ checkedAt: new Date(t0 + 60 * MIN) }, { checkedAt: new Date(t0 + 61 * MIN) }]);
    // The plan the store would choose for a monitor with a long history, forced on this small table.
    const plan = await executedPlan(t.services.db, `SELECT r.at FROM result_cursors c ${RESULTS_AFTER_CURSOR} WHERE c.target_id = $1`, [id],
      ['seqscan', 'bitmapscan', 'material', 'hashjoin', 'mergejoin']);
    const scans = plan.filter((n) => n['Relation Name'] === 'check_results');
    assert.equal(scans.length, 1);
    assert.equal(scans[0]!['Actual Rows'], 2);
    assert.equal(scans[0]!['Rows Removed by Filter'] ?? 0, 0, 'the 60 folded results were not read');
  });

  it('the history sweep keeps results past raw_days until they are folded', async () => {
    const other = await createTenantWithToken(t, { plan: 'team' });
    await overrideCaps(t, other.accountId, { raw_days: 7 });
    const id = (await client(t, other.token)('POST', '/api/v1/targets', httpTarget())).json().id as string;
    const old = Date.now() - 10 * DAY;
    const records = [0, 1].map((i) => ({ targetId: id, orgId: other.orgId, region: 'local', status: 'up' as const, duration_ms: 5, error: null, checkedAt: new Date(old + i * MIN), staleAfterMs: 3 * MIN }));
    await t.services.db.transaction((tx) => t.services.results.writeNow(tx, ...records));
    const raw = async (): Promise<number> => (await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM check_results WHERE target_id = $1', [id]))[0]!.n;

    await sweepHistory(t.services.db, t.services.plans, t.clock);
    assert.equal(await raw(), 2, 'not folded: both stay');
    await t.services.results.rollups.flush();
    await sweepHistory(t.services.db, t.services.plans, t.clock);
    assert.equal(await raw(), 1, 'folded: the older goes, the newest past raw_days stays');
  });
});
