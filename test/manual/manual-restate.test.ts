// Manual monitors (monitoring-api.md, "Manual monitor" transitions): the scheduler restates the
// state once a minute; a paused monitor, or one the plan no longer covers, keeps its state and
// reports it when it runs again. Hand-out and the restatement itself, on a real store.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { restateManualState } from '../../src/manual/index.js';
import { loadShards, toMonitor, type Monitor, type MonitorRow } from '../../src/scheduler/monitors.js';
import { SHARD_COUNT } from '../../src/scheduler/slots.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, httpTarget, overrideCaps, type Api, type Json } from '../targets/helpers.js';

describe('manual monitors: the scheduler restates the state', () => {
  let t: TestApp;
  let api: Api;
  let orgId: string;
  before(async () => {
    t = await startTestApp();
    const tenant = await createTenantWithToken(t, { plan: 'team' });
    api = client(t, tenant.token);
    orgId = tenant.orgId;
    // A plan floor above a minute must not slow the restatement down.
    await overrideCaps(t, tenant.accountId, { min_check_interval_secs: 3600 });
  });
  after(async () => { await t.close(); });

  const create = async (body: Json): Promise<string> => {
    const res = await api('POST', '/api/v1/targets', body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };
  const createManual = (name: string): Promise<string> => create({ name, check: { type: 'manual' } });
  const setState = async (id: string, body: Json): Promise<void> => {
    const res = await api('PUT', `/api/v1/targets/${id}/state`, body);
    assert.equal(res.statusCode, 200, res.body);
  };
  const getState = async (id: string): Promise<Json> => (await api('GET', `/api/v1/targets/${id}/state`)).json();
  /** The monitor as the scheduler would run it now; null when it is not handed out. */
  const handOut = async (id: string): Promise<Monitor | null> => {
    let row: MonitorRow | undefined;
    for await (const page of loadShards(t.services.db, Array.from({ length: SHARD_COUNT }, (_, i) => i))) row ??= page.find((r) => r.id === id);
    assert.ok(row, 'the monitor is in its shard');
    const deps = { plans: t.services.plans, sealer: t.services.sealer, catalog: await t.services.regions.enabled(), log: pino({ level: 'silent' }) };
    return toMonitor(row, deps);
  };
  const restate = (id: string): Promise<boolean> => restateManualState(t.services.db, t.services.results, t.services.clock, { id, orgId });
  const results = (id: string) => t.services.db.query<{ status: string; error: string | null; region: string; stale_after_ms: number | null }>(
    'SELECT status, error, region, stale_after_ms FROM check_results WHERE target_id = $1 ORDER BY checked_at, id', [id]);

  it('a running manual monitor is handed out every 60 s, with no region, whatever the plan floor; heartbeats are not', async () => {
    const manual = await handOut(await createManual('board'));
    assert.ok(manual, 'handed out');
    assert.deepEqual([manual.restated, manual.intervalMs, manual.regions], [true, 60_000, []]);
    const heartbeat = await create({ name: 'cron', check: { type: 'heartbeat', period: 3_600_000 } });
    assert.equal(await handOut(heartbeat), null, 'heartbeats are judged by their own sweep');
    const probed = await handOut(await create(httpTarget()));
    assert.equal(probed?.restated, false);
    assert.equal(probed?.intervalMs, 3_600_000, 'a probed monitor still gets the plan floor');
  });

  it('restating writes the current state: the note as the reason, region none, no stale cap', async () => {
    const fresh = await createManual('never set');
    assert.equal(await restate(fresh), true);
    assert.deepEqual(await results(fresh), [{ status: 'up', error: null, region: 'none', stale_after_ms: null }], 'up from creation');

    const id = await createManual('api');
    await setState(id, { status: 'down', note: 'database failover in progress' });
    assert.equal(await restate(id), true);
    assert.equal(await restate(id), true);
    const down = { status: 'down', error: 'database failover in progress', region: 'none', stale_after_ms: null };
    assert.deepEqual(await results(id), [down, down, down], 'the set, then two restatements');
    assert.equal((await getState(id)).status, 'down', 'restating does not change the state');
  });

  it('restatements feed the one incident of the hand-set state and never reopen it once set up', async () => {
    const id = await createManual('payments');
    const incidents = () => t.services.db.query<{ status: string }>('SELECT status FROM incidents WHERE target_id = $1 ORDER BY started_at', [id]);
    await setState(id, { status: 'down', note: 'card processor outage' });
    await restate(id);
    assert.deepEqual(await incidents(), [{ status: 'open' }], 'one incident, still open');
    const streaks = await t.services.db.query<{ region: string }>('SELECT region FROM alert_streaks WHERE target_id = $1', [id]);
    assert.deepEqual(streaks.map((s) => s.region), ['none'], 'the same region as the set: no second streak');
    await setState(id, { status: 'up' });
    await restate(id);
    const after = await incidents();
    assert.equal(after.length, 1);
    assert.notEqual(after[0]!.status, 'open', 'closed by the set, not reopened by the restatement');
  });

  it('a paused manual monitor is not handed out and keeps its state; resumed, it restates it', async () => {
    const id = await createManual('maintenance board');
    await setState(id, { status: 'degraded', note: 'slow checkouts' });
    const state = await getState(id);
    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { enabled: false })).statusCode, 200);
    assert.equal(await handOut(id), null, 'not handed out while paused');
    assert.equal(await restate(id), false, 'a restatement handed out before the pause writes nothing');
    assert.equal((await results(id)).length, 1, 'only the set');
    assert.deepEqual(await getState(id), state, 'the state is kept');

    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { enabled: true })).statusCode, 200);
    assert.ok((await handOut(id))?.restated, 'handed out again');
    assert.equal(await restate(id), true);
    assert.deepEqual((await results(id)).at(-1), { status: 'degraded', error: 'slow checkouts', region: 'none', stale_after_ms: null });
    assert.deepEqual(await getState(id), state);
  });

  const incidentsOf = (id: string) => t.services.db.query<{ status: string }>('SELECT status FROM incidents WHERE target_id = $1', [id]);

  it('a set on a paused monitor is kept and audited but writes no result and opens no incident; resumed, the restatement reports it', async () => {
    const id = await createManual('paused board');
    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { enabled: false })).statusCode, 200);
    await setState(id, { status: 'down', note: 'set while paused' });
    assert.deepEqual([(await getState(id)).status, (await getState(id)).note], ['down', 'set while paused'], 'the state is stored');
    const audited = await t.services.db.query(`SELECT 1 FROM audit_log WHERE entity_id = $1 AND action = 'target.state_set'`, [id]);
    assert.equal(audited.length, 1, 'the set is audited');
    assert.deepEqual(await results(id), [], 'no result while paused');
    assert.deepEqual(await incidentsOf(id), [], 'nothing pages');

    assert.equal((await api('PATCH', `/api/v1/targets/${id}`, { enabled: true })).statusCode, 200);
    assert.ok((await handOut(id))?.restated, 'handed out again');
    assert.equal(await restate(id), true);
    assert.deepEqual(await results(id), [{ status: 'down', error: 'set while paused', region: 'none', stale_after_ms: null }]);
    assert.deepEqual(await incidentsOf(id), [{ status: 'open' }], 'reported once it runs again');
  });

  it('a set on a held monitor writes no result; released, the restatement reports it', async () => {
    const id = await createManual('held board');
    // No route holds a monitor yet: the plan-hold reconcile sets the column, as here.
    const hold = (at: Date | null) => t.services.db.query('UPDATE targets SET held_at = $2 WHERE id = $1', [id, at]);
    await hold(new Date());
    await setState(id, { status: 'down', note: 'set while held' });
    assert.equal((await getState(id)).status, 'down', 'the state is stored');
    assert.deepEqual(await results(id), [], 'no result while held');
    assert.deepEqual(await incidentsOf(id), [], 'nothing pages');

    await hold(null);
    assert.ok((await handOut(id))?.restated, 'handed out once released');
    assert.equal(await restate(id), true);
    assert.deepEqual((await results(id)).map((r) => [r.status, r.error]), [['down', 'set while held']]);
  });

  it('a set committing while a restatement waits is read, never overtaken by the state it replaced', async () => {
    const id = await createManual('race');
    await setState(id, { status: 'down', note: 'before' });
    let restating: Promise<boolean> | undefined;
    // What a set does: hold the monitor's row for update, change the state, commit.
    await t.services.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM targets WHERE id = $1 FOR UPDATE', [id]);
      await tx.query(`UPDATE manual_states SET status = 'up', note = NULL WHERE target_id = $1`, [id]);
      restating = restate(id);
      await sleep(300); // the restatement has read by now unless it waits for this commit
    });
    assert.equal(await restating, true);
    assert.deepEqual((await results(id)).map((r) => r.status), ['down', 'up']);
  });
});
