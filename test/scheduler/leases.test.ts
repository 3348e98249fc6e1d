// Shard leases across nodes on one store: even shares, no shard held twice, a silent node's shards
// taken over once its lease lapses, and a node that cannot renew stops running before that.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/db.js';
import { ShardLeases } from '../../src/scheduler/leases.js';
import { SHARD_COUNT } from '../../src/scheduler/slots.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe('scheduler: shard leases', () => {
  let t: TestApp;
  before(async () => { t = await startTestApp(); });
  after(async () => { await t.close(); });

  const holders = async () => t.services.db.query<{ node_id: string | null; n: number }>(
    'SELECT node_id, count(*)::int AS n FROM scheduler_leases WHERE lease_until > now() GROUP BY node_id');

  it('two nodes split the shards evenly; none is held twice', async () => {
    const a = new ShardLeases(t.services.db, { ttlMs: 1500, renewMs: 300 });
    const b = new ShardLeases(t.services.db, { ttlMs: 1500, renewMs: 300 });
    assert.equal((await a.renew()).gained.length, SHARD_COUNT, 'alone, a node takes every shard');
    assert.deepEqual((await b.renew()).gained, [], 'nothing is free yet');
    const { lost } = await a.renew();
    assert.equal(lost.length, SHARD_COUNT / 2, 'a gives back what is beyond its share');
    assert.equal((await b.renew()).gained.length, SHARD_COUNT / 2);
    const mineA = new Set(a.owned());
    assert.ok(b.owned().every((s) => !mineA.has(s)), 'disjoint');
    assert.deepEqual((await holders()).map((h) => h.n).sort(), [SHARD_COUNT / 2, SHARD_COUNT / 2]);
    assert.ok(a.runs(a.owned()[0]!) && !a.runs(b.owned()[0]!));
    await a.release();
    await b.release();
  });

  it("a node that stops renewing stops running first, then its shards go to the other", async () => {
    const a = new ShardLeases(t.services.db, { ttlMs: 1000, renewMs: 250 });
    const b = new ShardLeases(t.services.db, { ttlMs: 1000, renewMs: 250 });
    await a.renew();
    await b.renew();
    await a.renew();
    await b.renew();
    const shardOfA = a.owned()[0]!;
    assert.ok(a.runs(shardOfA));
    // a goes silent (crashed, or cut off from the store); b keeps renewing.
    await sleep(800);
    assert.equal(a.runs(shardOfA), false, 'a stops before its lease lapses (ttl - renew)');
    let taken = false;
    for (let i = 0; i < 12 && !taken; i++) {
      await sleep(250);
      await b.renew();
      taken = b.owned().length === SHARD_COUNT;
    }
    assert.ok(taken, `b took every shard, holds ${b.owned().length}`);
    assert.ok(b.runs(shardOfA));
    await b.release();
    await a.release();
  });

  it('the safe end counts from the renewing statement: a slow query before it does not leave the node running nothing', async () => {
    const ttlMs = 1000;
    const db = t.services.db;
    // The heartbeat that opens a round takes longer than the whole margin (ttl - renew).
    const slowHeartbeat: Db = new Proxy(db, {
      get: (target, key) => (key === 'query'
        ? async (sql: string, ...rest: unknown[]) => {
          if (sql.includes('INSERT INTO scheduler_nodes')) await sleep(ttlMs);
          return (target.query as (...args: unknown[]) => Promise<unknown>)(sql, ...rest);
        }
        : Reflect.get(target, key)),
    });
    const a = new ShardLeases(slowHeartbeat, { ttlMs, renewMs: 250 });
    try {
      await a.renew();
      assert.equal(a.owned().length, SHARD_COUNT);
      assert.ok(a.runs(a.owned()[0]!), 'the shards renewed after the slow query run');
    } finally {
      await a.release();
    }
  });

  it('release gives every shard back at once', async () => {
    const a = new ShardLeases(t.services.db, { ttlMs: 60_000, renewMs: 1000 });
    await a.renew();
    await a.release();
    assert.deepEqual(await holders(), []);
    assert.equal(a.runs(0), false);
  });
});
