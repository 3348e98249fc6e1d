// The ingest's remembered heartbeats (ingest.ts, store.ts `saveIfUnchanged`): a routine ping on a
// heartbeat this node committed last is judged from memory and saved by compare-and-set; any write
// since (another node's ping, the sweep, and through migration 0026's triggers a pause, hold, timing
// change or org deletion made behind the heartbeat's back) sends the ping to the locked path, which
// judges it from the stored row.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { evaluateHeartbeats, PingIngest, pingTokenHash } from '../../src/heartbeat/index.js';
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
  const stored = async (id: string) => (await t.services.db.query<{ status: string; last_ping_at: Date; window_from: Date; due_at: Date | null }>(
    'SELECT status, last_ping_at, window_from, due_at FROM heartbeats WHERE target_id = $1', [id]))[0]!;
  const logged = async (id: string) => (await t.services.db.query<{ counted: boolean }>(
    'SELECT counted FROM heartbeat_pings WHERE target_id = $1 ORDER BY received_at', [id])).map((r) => r.counted);

  it('a routine ping on a heartbeat this node committed takes the compare-and-set, and is stored', async () => {
    const hb = await heartbeat();
    const before = committed();
    await ping(hb.path);
    assert.equal(committed().lock, before.lock + 1, 'the first ping (pending to up) is judged under the lock');
    await ping(hb.path);
    await ping(hb.path);
    assert.equal(committed().compareAndSet, before.compareAndSet + 2);
    const [last] = await t.services.db.query<{ at: Date }>('SELECT max(received_at) AS at FROM heartbeat_pings WHERE target_id = $1', [hb.id]);
    assert.equal((await stored(hb.id)).last_ping_at.getTime(), last!.at.getTime());
    assert.deepEqual(await logged(hb.id), [true, true, true]);
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
    assert.deepEqual(committed(), { compareAndSet: before.compareAndSet, lock: before.lock + 1 });
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
    assert.deepEqual(committed(), { ...before, compareAndSet: before.compareAndSet + 1 });
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
});
