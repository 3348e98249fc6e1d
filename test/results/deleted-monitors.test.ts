// A monitor's results go with it (check_results has no foreign key: a trigger on targets deletes
// them, 0031_results_without_fk.sql), and the history sweep removes what a results batch wrote
// beside the delete, through the deleted ids it keeps for a day.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sweepHistory } from '../../src/results/index.js';
import { newId } from '../../src/shared/ids.js';
import { createTenantWithToken, startTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { client, httpTarget, type Api } from '../targets/helpers.js';

const DAY = 86_400_000;

describe('results of deleted monitors', () => {
  let t: TestApp;
  let tenant: Tenant & { token: string };
  let api: Api;
  before(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t);
    api = client(t, tenant.token);
  });
  after(async () => { await t.close(); });

  const monitorWithResults = async (n = 3): Promise<string> => {
    const id = (await api('POST', '/api/v1/targets', httpTarget())).json().id as string;
    for (let i = 0; i < n; i++) {
      t.services.results.push({
        targetId: id, orgId: tenant.orgId, region: 'local', status: 'up', duration_ms: 5, error: null,
        checkedAt: new Date(Date.now() - (n - i) * 60_000), staleAfterMs: 180_000,
      });
    }
    await t.services.results.flush();
    return id;
  };
  const resultCount = async (id: string): Promise<number> =>
    (await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM check_results WHERE target_id = $1', [id]))[0]!.n;
  /** A row as a batch whose join saw the monitor just before its delete committed would leave it. */
  const lateResult = (id: string) => t.services.db.query(
    `INSERT INTO check_results (id, target_id, org_id, region, checked_at, status, duration_ms) VALUES ($1, $2, $3, 'local', now(), 'up', 5)`,
    [newId(), id, tenant.orgId]);

  it('deleting a monitor, alone or in bulk, deletes its results and no other monitor\'s', async () => {
    const [one, two, three, kept] = [await monitorWithResults(), await monitorWithResults(), await monitorWithResults(), await monitorWithResults()];
    assert.equal((await api('DELETE', `/api/v1/targets/${one}`)).statusCode, 204);
    assert.equal((await api('POST', '/api/v1/targets/bulk-action', { action: 'delete', ids: [two, three] })).statusCode, 200);
    assert.deepEqual([await resultCount(one), await resultCount(two), await resultCount(three), await resultCount(kept)], [0, 0, 0, 3]);
  });

  it('the sweep removes results written beside their monitor\'s delete, and forgets deleted ids after a day', async () => {
    const id = await monitorWithResults();
    const kept = await monitorWithResults();
    assert.equal((await api('DELETE', `/api/v1/targets/${id}`)).statusCode, 204);
    await lateResult(id);
    assert.equal(await resultCount(id), 1);

    const report = await sweepHistory(t.services.db, t.services.plans, t.clock);
    assert.equal(report.orphans, 1);
    assert.deepEqual([await resultCount(id), await resultCount(kept)], [0, 3]);

    const remembered = async (): Promise<number> =>
      (await t.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM deleted_targets WHERE target_id = $1', [id]))[0]!.n;
    assert.equal(await remembered(), 1);
    t.clock.advance(DAY + 60_000);
    try {
      await sweepHistory(t.services.db, t.services.plans, t.clock);
      assert.equal(await remembered(), 0);
    } finally {
      t.clock.advance(-(DAY + 60_000));
    }
  });
});
