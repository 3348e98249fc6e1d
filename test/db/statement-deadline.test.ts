// Statements on PostgreSQL have a deadline: a connection gone silent (its server vanished without a
// reset) fails its statement and is dropped from the pool, instead of holding it for the kernel's
// retransmission timeout, some 15 minutes.
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { openPostgres, type Db } from '../../src/db/db.js';
import { ShardLeases } from '../../src/scheduler/leases.js';
import { startStallingProxy, type StallingProxy } from '../helpers/stalling-proxy.js';
import { createTestStore, usePostgres, type TestStore } from '../helpers/store.js';

const PAST_DEADLINE = /Query read timeout/;
const CONNECT_PAST_DEADLINE = /timeout expired/;

describe('PostgreSQL connect deadline', () => {
  it('fails a query whose connection a server accepted and never answered, and the next one too, each within the deadline', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const db = openPostgres(`postgres://kw@127.0.0.1:${(silent.address() as AddressInfo).port}/kw`, { max: 1, connectDeadlineMs: 300 });
    try {
      for (const n of [1, 2]) {
        const started = performance.now();
        await assert.rejects(db.query('SELECT 1'), CONNECT_PAST_DEADLINE);
        const took = performance.now() - started;
        assert.ok(took >= 250 && took < 5_000, `connect ${n} failed after ${Math.round(took)} ms`);
      }
      assert.equal(sockets.size, 2, 'each query tried a connection of its own');
    } finally {
      for (const socket of sockets) socket.destroy();
      await db.close().catch(() => {});
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('PostgreSQL statement deadline', { skip: !usePostgres && 'needs DATABASE_URL', timeout: 60_000 }, () => {
  let store: TestStore;
  let proxy: StallingProxy;
  const pools: Db[] = [];
  const open = (statementDeadlineMs: number, max = 1): Db => {
    const db = openPostgres(proxy.url, { max, statementDeadlineMs });
    pools.push(db);
    return db;
  };

  before(async () => {
    store = await createTestStore();
    proxy = await startStallingProxy(store.url!);
  });
  after(async () => {
    await proxy.close();
    await Promise.all(pools.map((db) => db.close().catch(() => {})));
    await store.drop();
  });

  it('fails a statement on a silent connection and answers the next one on a fresh connection', async () => {
    const db = open(300);
    assert.deepEqual(await db.query('SELECT 1 AS n'), [{ n: 1 }]);
    proxy.stall();
    await assert.rejects(db.query('SELECT 2 AS n'), PAST_DEADLINE);
    assert.deepEqual(await db.query('SELECT 3 AS n'), [{ n: 3 }]);
  });

  it('fails a transaction at once, without a ROLLBACK waiting out a deadline of its own, and never pools its connection again', async () => {
    const db = open(1_000);
    const started = { at: 0 };
    await assert.rejects(db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      proxy.stall();
      started.at = performance.now();
      await tx.query('SELECT 2');
    }), PAST_DEADLINE);
    // One deadline, not two (the statement's, then a ROLLBACK's on the same silent connection).
    assert.ok(performance.now() - started.at < 1_900, `failed after ${Math.round(performance.now() - started.at)} ms`);
    // The pool holds one connection: had the silent one been pooled again, this would fail too.
    assert.deepEqual(await db.transaction((tx) => tx.query('SELECT 3 AS n')), [{ n: 3 }]);
  });

  it('holds a slow statement to the deadline, and lets a query that asks for none, and a script, run past it', async () => {
    const db = open(200, 2);
    await assert.rejects(db.query('SELECT pg_sleep(0.6)'), PAST_DEADLINE);
    await assert.rejects(db.query('SELECT pg_sleep(0.6)', [], { timeoutMs: 300 }), PAST_DEADLINE);
    assert.equal((await db.query('SELECT pg_sleep(0.6)', [], { timeoutMs: Infinity })).length, 1);
    await db.exec('SELECT pg_sleep(0.6)');
    await db.transaction((tx) => tx.exec('SELECT pg_sleep(0.6)'));
  });

  it('lets a query wait for a busy pool\'s connection longer than the connect deadline', async () => {
    const db = openPostgres(proxy.url, { max: 1, connectDeadlineMs: 200 });
    pools.push(db);
    const holding = db.transaction((tx) => tx.query('SELECT pg_sleep(0.6)'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(await db.query('SELECT 1 AS n'), [{ n: 1 }]);
    await holding;
  });

  it('gives a lease renewal only its margin (ttl - renew): a round on a silent connection fails in time and the next one renews', async () => {
    // The pool's own deadline is far beyond the test's timeout: only the renewal's margin can end the round.
    const db = open(600_000);
    const leases = new ShardLeases(db, { ttlMs: 3_000, renewMs: 1_000 });
    await leases.renew();
    const shard = leases.owned()[0]!;
    assert.ok(leases.runs(shard));
    proxy.stall();
    await assert.rejects(leases.renew(), PAST_DEADLINE);
    await leases.renew();
    assert.ok(leases.runs(shard), 'the node runs its shard again after a renewal on a fresh connection');
    await leases.release();
  });
});
