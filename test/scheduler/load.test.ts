// How the scheduler reads its monitors: in pages by id (every monitor once, in order, whatever the
// page size, shard subset or changed-since filter), and a full reload that drops what it did not
// see, except a monitor a poll read while the reload ran; a poll drops a monitor deleted since the
// last; the checks a second it keeps count of as
// monitors come, go and change interval (what sizes the timer's quantum).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/db.js';
import { deletedSince, loadShards, type MonitorRow } from '../../src/scheduler/monitors.js';
import type { Scheduler } from '../../src/scheduler/scheduler.js';
import { SHARD_COUNT, shardOf } from '../../src/scheduler/slots.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { Api } from '../targets/helpers.js';
import { tenantAtKindFloor, testScheduler } from './helpers.js';

const ALL_SHARDS = Array.from({ length: SHARD_COUNT }, (_, i) => i);

async function pagesOf(pages: AsyncIterable<MonitorRow[]>): Promise<string[][]> {
  const out: string[][] = [];
  for await (const page of pages) out.push(page.map((row) => row.id));
  return out;
}

describe('scheduler: loading monitors', () => {
  let t: TestApp;
  let api: Api;
  const ids: string[] = [];
  const stopped: Scheduler[] = [];

  const create = async (name: string): Promise<string> => {
    const res = await api('POST', '/api/v1/targets', { name, check: { type: 'tcp', host: '127.0.0.1', port: 9 }, interval: 60 });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };

  before(async () => {
    t = await startTestApp({ config: { 'security.allow_private_targets': true } });
    ({ api } = await tenantAtKindFloor(t));
    for (let i = 0; i < 5; i++) ids.push(await create(`m${i}`));
    ids.sort();
  });
  after(async () => {
    await Promise.all(stopped.map((s) => s.stop()));
    await t.close();
  });

  it('reads every monitor once, in pages of at most the page size, in id order', async () => {
    assert.deepEqual(await pagesOf(loadShards(t.services.db, ALL_SHARDS, undefined, 2)), [ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
    assert.deepEqual(await pagesOf(loadShards(t.services.db, ALL_SHARDS, undefined, 5)), [ids], 'a full last page ends with an empty read');
    assert.deepEqual(await pagesOf(loadShards(t.services.db, ALL_SHARDS)), [ids]);
    assert.deepEqual(await pagesOf(loadShards(t.services.db, [])), []);
  });

  it('pages keep to the shards asked for and to monitors changed since', async () => {
    const shards = [shardOf(ids[1]!), shardOf(ids[3]!)];
    const inShards = ids.filter((id) => shards.includes(shardOf(id)));
    assert.deepEqual((await pagesOf(loadShards(t.services.db, shards, undefined, 1))).flat(), inShards);

    const since = new Date();
    await sleep(5);
    assert.equal((await api('PATCH', `/api/v1/targets/${ids[0]}`, { name: 'renamed' })).statusCode, 200);
    assert.equal((await api('PATCH', `/api/v1/targets/${ids[4]}`, { name: 'renamed' })).statusCode, 200);
    assert.deepEqual(await pagesOf(loadShards(t.services.db, ALL_SHARDS, since, 1)), [[ids[0]], [ids[4]]]);
    // A plan hold moves no updated_at, only its own time: the poll reads both.
    await t.services.db.query('UPDATE targets SET held_at = now(), hold_changed_at = now() WHERE id = $1', [ids[2]]);
    assert.deepEqual((await pagesOf(loadShards(t.services.db, ALL_SHARDS, since))).flat(), [ids[0], ids[2], ids[4]]);
    await t.services.db.query('UPDATE targets SET held_at = NULL WHERE id = $1', [ids[2]]);
  });

  it('a full reload drops a deleted monitor but keeps one a poll read while it ran', async () => {
    // The reload's read is held after it returns (read, not yet applied) while a monitor is created
    // and a poll schedules it: the reload did not see it, and must not unschedule it.
    let armed = false;
    let reached!: () => void;
    const reachedGate = new Promise<void>((resolve) => (reached = resolve));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const s = t.services;
    const db: Db = {
      ...s.db,
      query: async <T>(sql: string, params?: readonly unknown[], options?: object): Promise<T[]> => {
        const rows = await s.db.query<T>(sql, params, options);
        if (armed && sql.includes('json_agg(page.row)') && !sql.includes('updated_at >=')) {
          armed = false;
          reached();
          await gate;
        }
        return rows;
      },
    };
    const scheduler = testScheduler(t, { db, leases: { ttlMs: 60_000, renewMs: 20_000 }, pollMs: 50, reloadMs: 3_600_000 });
    stopped.push(scheduler);
    await scheduler.start();
    assert.equal(scheduler.scheduledCount, 5);
    const rate = (): number => Math.round(scheduler.checksPerSecond * 60_000) / 1000;
    assert.equal(rate(), 5, 'five monitors a minute: what sizes the timer\'s quantum');

    assert.equal((await api('DELETE', `/api/v1/targets/${ids[2]}`)).statusCode, 204);
    // As if its deletion were older than the polls look back: only the reload can drop it now.
    await s.db.query(`UPDATE deleted_targets SET deleted_at = now() - interval '1 hour' WHERE target_id = $1`, [ids[2]]);
    armed = true;
    const reloading = (scheduler as unknown as { reload(): Promise<void> }).reload();
    await reachedGate;
    const created = await create('during the reload');
    for (let i = 0; i < 100 && scheduler.scheduledCount < 6; i++) await sleep(20);
    assert.equal(scheduler.scheduledCount, 6, 'a poll scheduled the new monitor while the reload was held');
    // Polls stop reading it (it looks long unchanged), so only the reload can touch it now.
    await s.db.query(`UPDATE targets SET updated_at = now() - interval '1 hour' WHERE id = $1`, [created]);
    await sleep(200);
    open();
    await reloading;
    assert.equal(scheduler.scheduledCount, 5, 'the deleted monitor left, the new one stayed');
    assert.equal(rate(), 5, 'the rate follows monitors added and removed');
    assert.equal((await api('PATCH', `/api/v1/targets/${created}`, { interval: 30 })).statusCode, 200);
    for (let i = 0; i < 100 && rate() !== 6; i++) await sleep(20);
    assert.equal(rate(), 6, 'and interval changes (one monitor now twice a minute)');
    ids.splice(2, 1, created);
  });

  it('a poll drops a monitor deleted since the last one, without waiting for a full reload', async () => {
    await Promise.all(stopped.splice(0).map((earlier) => earlier.stop())); // its shard leases go with it
    const scheduler = testScheduler(t, { leases: { ttlMs: 60_000, renewMs: 20_000 }, pollMs: 50, reloadMs: 3_600_000 });
    stopped.push(scheduler);
    await scheduler.start();
    const before = scheduler.scheduledCount;
    const doomed = await create('deleted soon');
    for (let i = 0; i < 100 && scheduler.scheduledCount === before; i++) await sleep(20);
    assert.equal(scheduler.scheduledCount, before + 1);
    assert.deepEqual(await deletedSince(t.services.db, new Date()), []);
    const deletedAfter = new Date(Date.now() - 1000);
    assert.equal((await api('DELETE', `/api/v1/targets/${doomed}`)).statusCode, 204);
    assert.deepEqual(await deletedSince(t.services.db, deletedAfter), [doomed]);
    for (let i = 0; i < 100 && scheduler.scheduledCount > before; i++) await sleep(20);
    assert.equal(scheduler.scheduledCount, before, 'gone at the next poll (the reload is an hour away)');
  });
});
