// The ingest's remembered heartbeats (ingest.ts, store.ts `saveIfUnchanged`, `saveRoutine`): a ping
// on a heartbeat this node committed last is judged from memory and saved by compare-and-set (a
// narrower statement for a batch of routine successes alone, which on PGlite writes only the log,
// read back by whoever next judges or shows the heartbeat); any write
// since (another node's ping, the sweep, and through migration 0026's triggers a pause, hold, timing
// change or org deletion made behind the heartbeat's back) sends the ping to the locked path, which
// judges it from the stored row.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { evaluateHeartbeats, PingIngest, pingTokenHash } from '../../src/heartbeat/index.js';
import { LOGGED_SUCCESS_SQL, withLoggedSuccess } from '../../src/heartbeat/store.js';
import { createTenantWithToken, startTestApp, type TestApp } from '../helpers/app.js';
import { client, type Api } from '../targets/helpers.js';

const MIN = 60_000;

describe('heartbeat ingest: remembered state', () => {
  let t: TestApp;
  let api: Api;
  /** Another node's ingest on the same store. */
  let otherNode: PingIngest;
  before(async () => {
    t = await startTestApp();
    api = client(t, (await createTenantWithToken(t, { plan: 'team' })).token);
    otherNode = new PingIngest({ db: t.services.db, results: t.services.results, clock: t.clock, log: t.services.log });
  });
  after(async () => {
    await otherNode.flush();
    await t.close();
  });

  const heartbeat = async (as: Api = api): Promise<{ id: string; path: string; tokenHash: string }> => {
    const res = await as('POST', '/api/v1/targets', { name: 'job', check: { type: 'heartbeat', period: 10 * MIN, grace: 2 * MIN } });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().id as string;
    const path = new URL((await as('GET', `/api/v1/targets/${id}/heartbeat`)).json().ping_url).pathname;
    return { id, path, tokenHash: pingTokenHash(path.split('/')[2]!) };
  };
  /** A ping through this node's HTTP endpoint, a second later than the last. */
  const ping = async (path: string): Promise<void> => {
    t.clock.advance(1_000);
    const res = await t.inject({ method: 'GET', url: path });
    assert.equal(res.statusCode, 200, res.body);
  };
  const committed = () => ({ ...t.services.pings.committedBy });
  const results = async (id: string) => (await t.services.db.query<{ status: string }>(
    'SELECT status FROM check_results WHERE target_id = $1 ORDER BY checked_at, id', [id])).map((r) => r.status);
  type Row = { status: string; last_ping_at: Date; last_success_at: Date; window_from: Date; due_at: Date | null; run_started_at: Date | null; last_exit_code: number | null };
  /** The heartbeat's row as written. */
  const raw = async (id: string) => (await t.services.db.query<Row & { version: string }>(
    'SELECT status, last_ping_at, last_success_at, window_from, due_at, run_started_at, last_exit_code, xmin::text AS version FROM heartbeats h WHERE target_id = $1', [id]))[0]!;
  /** The heartbeat as it stands: its row with the routine successes logged since folded in. */
  const stored = async (id: string): Promise<Row> => {
    const [row] = await t.services.db.query<Row & { logged_success: Date | null }>(
      `SELECT status, last_ping_at, last_success_at, window_from, due_at, run_started_at, last_exit_code, ${LOGGED_SUCCESS_SQL} AS logged_success
         FROM heartbeats h WHERE target_id = $1`, [id]);
    const { logged_success: _, ...folded } = withLoggedSuccess(row!);
    return folded;
  };
  const logOnly = (): boolean => t.services.db.kind === 'pglite';
  const pingLog = async (id: string) => (await t.services.db.query<{ signal: string; exit_code: number | null; run_ms: number | null }>(
    'SELECT signal, exit_code, run_ms FROM heartbeat_pings WHERE target_id = $1 ORDER BY received_at', [id])).map((r) => [r.signal, r.exit_code, r.run_ms]);
  const logged = async (id: string) => (await t.services.db.query<{ counted: boolean }>(
    'SELECT counted FROM heartbeat_pings WHERE target_id = $1 ORDER BY received_at', [id])).map((r) => r.counted);

  it('a routine ping on a heartbeat this node committed takes the routine compare-and-set, and is stored', async () => {
    const hb = await heartbeat();
    const before = committed();
    await ping(hb.path);
    assert.equal(committed().lock, before.lock + 1, 'the first ping (pending to up) is judged under the lock');
    const first = await raw(hb.id);
    await ping(hb.path);
    await ping(hb.path);
    assert.deepEqual(committed(), { ...before, lock: before.lock + 1, routine: before.routine + 2 });
    if (logOnly()) assert.deepEqual(await raw(hb.id), first, 'on PGlite a routine success writes only its log row');
    else assert.notEqual((await raw(hb.id)).version, first.version, 'on PostgreSQL it updates the row');
    const record = (await api('GET', `/api/v1/targets/${hb.id}/heartbeat`)).json();
    const [last] = await t.services.db.query<{ at: Date }>('SELECT max(received_at) AS at FROM heartbeat_pings WHERE target_id = $1', [hb.id]);
    const now = await stored(hb.id);
    assert.equal(now.last_ping_at.getTime(), last!.at.getTime());
    assert.equal(record.last_ping_at, last!.at.toISOString(), 'the record shows the last routine success');
    assert.equal(now.last_success_at.getTime(), last!.at.getTime());
    assert.equal(now.window_from.getTime(), last!.at.getTime(), 'the silence clock restarts at the last success');
    assert.equal(now.due_at!.getTime(), first.due_at!.getTime(), 'the deadline is kept (early) for the sweep to move on');
    assert.deepEqual(await logged(hb.id), [true, true, true]);
    assert.deepEqual(await pingLog(hb.id), [['success', null, null], ['success', null, null], ['success', null, null]]);
    assert.deepEqual(await results(hb.id), ['up']);
  });

  it('a run and a new exit code on a remembered heartbeat take the full compare-and-set, each stored', async () => {
    const hb = await heartbeat();
    await ping(hb.path);
    await ping(hb.path);
    let before = committed();
    await ping(`${hb.path}/0`);
    assert.deepEqual(committed(), { ...before, compareAndSet: before.compareAndSet + 1 }, 'a success with a new exit code');
    assert.equal((await stored(hb.id)).last_exit_code, 0);
    before = committed();
    await ping(`${hb.path}/start`);
    const started = await stored(hb.id);
    assert.equal(started.run_started_at!.getTime(), started.last_ping_at.getTime());
    await ping(`${hb.path}/0`);
    assert.deepEqual(committed(), { ...before, compareAndSet: before.compareAndSet + 2 }, 'a start, and the success that ends its run');
    const finished = await stored(hb.id);
    assert.equal(finished.run_started_at, null);
    assert.equal(finished.last_exit_code, 0);
    assert.equal(finished.last_success_at.getTime(), finished.last_ping_at.getTime());
    before = committed();
    await ping(`${hb.path}/0`);
    assert.deepEqual(committed(), { ...before, routine: before.routine + 1 }, 'the same exit code again is routine');
    assert.equal((await stored(hb.id)).last_exit_code, 0);
    const [start, end, again] = (await pingLog(hb.id)).slice(3);
    assert.deepEqual([start, again], [['start', null, null], ['success', 0, null]]);
    assert.deepEqual(end!.slice(0, 2), ['success', 0]);
    assert.ok(Number(end![2]) >= 1_000, `the run lasted from the start to the finish: ${end![2]} ms`);
    assert.deepEqual(await results(hb.id), ['up']);
  });

  it("another node's ping since is seen: the success ends the failure it recorded", async () => {
    const hb = await heartbeat();
    await ping(hb.path);
    await ping(hb.path);
    t.clock.advance(1_000);
    assert.ok(await otherNode.ping(hb.tokenHash, 'fail', null));
    assert.equal((await stored(hb.id)).status, 'down');
    const before = committed();
    await ping(hb.path);
    assert.deepEqual(committed(), { ...before, lock: before.lock + 1 });
    assert.equal((await stored(hb.id)).status, 'up');
    assert.deepEqual(await results(hb.id), ['up', 'down', 'up']);
  });

  it("the sweep's verdict since is seen: the next success is a recovery", async () => {
    const hb = await heartbeat();
    await ping(hb.path);
    await ping(hb.path);
    t.clock.advance(12 * MIN + 1_000);
    await evaluateHeartbeats(t.services);
    assert.equal((await stored(hb.id)).status, 'down');
    await ping(hb.path);
    assert.equal((await stored(hb.id)).status, 'up');
    assert.deepEqual(await results(hb.id), ['up', 'down', 'up']);
  });

  // Each change is made behind the heartbeat row's back, in SQL; the triggers of migration 0026 rewrite the row.
  const uncounting: Array<[string, (hb: { id: string }, orgId: string) => Promise<unknown>]> = [
    ['a pause', (hb) => t.services.db.query('UPDATE targets SET enabled = false WHERE id = $1', [hb.id])],
    ['a hold', (hb) => t.services.db.query('UPDATE targets SET held_at = now() WHERE id = $1', [hb.id])],
    ["the org's deletion", (_hb, orgId) => t.services.db.query('UPDATE orgs SET deleted_at = now() WHERE id = $1', [orgId])],
  ];
  for (const [change, make] of uncounting) {
    it(`${change} made without touching the heartbeat row is seen: the ping is logged, not counted`, async () => {
      const tenant = await createTenantWithToken(t, { plan: 'team' });
      const hb = await heartbeat(client(t, tenant.token));
      await ping(hb.path);
      await ping(hb.path);
      const was = await stored(hb.id);
      await make(hb, tenant.orgId);
      const before = committed();
      await ping(hb.path);
      assert.equal(committed().lock, before.lock + 1);
      assert.deepEqual(await stored(hb.id), was);
      assert.deepEqual(await logged(hb.id), [true, true, false]);
    });
  }

  it('a timing change made without touching the heartbeat row is seen: the deadline follows the new grace', async () => {
    const hb = await heartbeat();
    await ping(hb.path);
    await ping(hb.path);
    await t.services.db.query(`UPDATE targets SET check_spec = jsonb_set(check_spec, '{grace}', '0') WHERE id = $1`, [hb.id]);
    const before = committed();
    await ping(hb.path);
    assert.equal(committed().lock, before.lock + 1);
    // Judged with the old grace, the stored (earlier) deadline would have stood.
    const row = await stored(hb.id);
    assert.equal(row.due_at!.getTime(), row.window_from.getTime() + 10 * MIN);
  });

  it('a monitor change that leaves counting and timing alone keeps the compare-and-set', async () => {
    const hb = await heartbeat();
    await ping(hb.path);
    await ping(hb.path);
    assert.equal((await api('PATCH', `/api/v1/targets/${hb.id}`, { name: 'renamed job', tags: ['nightly'] })).statusCode, 200);
    const before = committed();
    await ping(hb.path);
    assert.deepEqual(committed(), { ...before, routine: before.routine + 1 });
  });

  it('a pause and resume through the API are seen, and the resumed heartbeat is judged again', async () => {
    const hb = await heartbeat();
    await ping(hb.path);
    await ping(hb.path);
    assert.equal((await api('PATCH', `/api/v1/targets/${hb.id}`, { enabled: false })).statusCode, 200);
    await ping(hb.path);
    assert.equal((await api('PATCH', `/api/v1/targets/${hb.id}`, { enabled: true })).statusCode, 200);
    await ping(hb.path);
    assert.deepEqual(await logged(hb.id), [true, true, false, true]);
    assert.equal((await stored(hb.id)).status, 'up');
  });
  it('the sweep reads the routine successes logged since the row was written: no silence is seen', async () => {
    const hb = await heartbeat();
    await ping(hb.path);
    const first = await raw(hb.id);
    t.clock.advance(5 * MIN);
    await ping(hb.path);
    // Past the deadline the row was written with (first ping + 12 minutes), 8 minutes after the last success.
    t.clock.advance(8 * MIN);
    await evaluateHeartbeats(t.services);
    const now = await raw(hb.id);
    assert.equal(now.status, 'up');
    assert.notEqual(now.version, first.version, 'the sweep rewrote the row');
    const [last] = await t.services.db.query<{ at: Date }>('SELECT max(received_at) AS at FROM heartbeat_pings WHERE target_id = $1', [hb.id]);
    assert.equal(now.last_success_at.getTime(), last!.at.getTime(), 'with the logged success folded in');
    assert.equal(now.due_at!.getTime(), last!.at.getTime() + 12 * MIN);
    assert.deepEqual(await results(hb.id), ['up']);
  });

  it("a node that does not remember the heartbeat judges it with this node's routine successes folded in", async () => {
    const hb = await heartbeat();
    await ping(hb.path);
    await ping(hb.path);
    const [success] = await t.services.db.query<{ at: Date }>('SELECT max(received_at) AS at FROM heartbeat_pings WHERE target_id = $1', [hb.id]);
    t.clock.advance(1_000);
    assert.ok(await otherNode.ping(hb.tokenHash, 'start', null));
    const row = await raw(hb.id);
    const [start] = await t.services.db.query<{ at: Date }>(`SELECT received_at AS at FROM heartbeat_pings WHERE target_id = $1 AND signal = 'start'`, [hb.id]);
    assert.equal(row.run_started_at!.getTime(), start!.at.getTime());
    assert.equal(row.last_success_at.getTime(), success!.at.getTime());
    assert.equal(row.window_from.getTime(), success!.at.getTime(), 'a start leaves the silence clock where the last success set it');
  });

  it('a timing change through the API reads the routine successes: the deadline runs from the last one', async () => {
    const hb = await heartbeat();
    await ping(hb.path);
    t.clock.advance(3 * MIN);
    await ping(hb.path);
    assert.equal((await api('PATCH', `/api/v1/targets/${hb.id}`, { check: { type: 'heartbeat', period: 10 * MIN, grace: 5 * MIN } })).statusCode, 200);
    const row = await raw(hb.id);
    const [success] = await t.services.db.query<{ at: Date }>('SELECT max(received_at) AS at FROM heartbeat_pings WHERE target_id = $1', [hb.id]);
    assert.equal(row.window_from.getTime(), success!.at.getTime());
    assert.equal(row.due_at!.getTime(), success!.at.getTime() + 15 * MIN);
  });

  it('a deadline is stored at most a week ahead, so the sweep folds the log in long before the log is swept', async () => {
    const DAY = 86_400_000;
    const res = await api('POST', '/api/v1/targets', { name: 'monthly', check: { type: 'heartbeat', period: 30 * DAY, grace: 30 * DAY } });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().id as string;
    const path = new URL((await api('GET', `/api/v1/targets/${id}/heartbeat`)).json().ping_url).pathname;
    await ping(path);
    const [first] = await t.services.db.query<{ at: Date }>('SELECT received_at AS at FROM heartbeat_pings WHERE target_id = $1', [id]);
    assert.equal((await raw(id)).due_at!.getTime(), first!.at.getTime() + 7 * DAY);
    t.clock.advance(7 * DAY + 1_000);
    const sweptFrom = t.clock.now().getTime();
    await evaluateHeartbeats(t.services);
    const row = await raw(id);
    assert.equal(row.status, 'up');
    const due = row.due_at!.getTime() - 7 * DAY;
    assert.ok(due >= sweptFrom && due <= t.clock.now().getTime(), 'moved on a week from the sweep, not judged');
  });
});
