// Embedded store upkeep: PGlite has no autovacuum launcher, so Keepwatch vacuums it itself; without
// that, a table whose rows are updated grows by its whole size at every round of updates.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { openPglite, type Db } from '../../src/db/db.js';
import { startStoreUpkeep, vacuumTables } from '../../src/db/upkeep.js';

const ROWS = 2_000;
const ROUNDS = 20;

describe('embedded store upkeep', () => {
  let db: Awaited<ReturnType<typeof openPglite>>;
  before(async () => { db = await openPglite(); });
  after(async () => { await db.close(); });

  const size = async (table: string): Promise<number> =>
    (await db.query<{ n: number }>('SELECT pg_relation_size($1::regclass)::int AS n', [table]))[0]!.n;
  const churn = async (table: string, between: () => Promise<unknown>): Promise<{ first: number; last: number }> => {
    await db.exec(`CREATE TABLE ${table} (id int PRIMARY KEY, v int NOT NULL, pad text NOT NULL);
      INSERT INTO ${table} SELECT g, 0, repeat('x', 100) FROM generate_series(1, ${ROWS}) g;`);
    const first = await size(table);
    for (let round = 0; round < ROUNDS; round++) {
      await db.exec(`UPDATE ${table} SET v = v + 1`);
      await between();
    }
    return { first, last: await size(table) };
  };

  it('reclaims dead rows, so a churning table stops growing', async () => {
    const bloated = await churn('churn_unvacuumed', async () => {});
    assert.ok(bloated.last > 10 * bloated.first, `without vacuum the table grows: ${JSON.stringify(bloated)}`);

    const kept = await churn('churn_vacuumed', () => vacuumTables(db));
    assert.ok(kept.last <= 3 * kept.first, `vacuumed between rounds the table stays small: ${JSON.stringify(kept)}`);
  });

  it('refreshes planner statistics when asked', async () => {
    await db.exec(`CREATE TABLE fresh_stats (id int PRIMARY KEY); INSERT INTO fresh_stats SELECT generate_series(1, 500);`);
    const estimate = async () => (await db.query<{ n: number }>(`SELECT reltuples::int AS n FROM pg_class WHERE relname = 'fresh_stats'`))[0]!.n;
    assert.equal(await estimate(), -1, 'never analyzed');
    const report = await vacuumTables(db, { analyze: true });
    assert.equal(report.analyzed, true);
    assert.ok(report.tables >= 3, JSON.stringify(report));
    assert.equal(await estimate(), 500);
  });

  it('runs on its timer on the embedded store, and stops', async () => {
    await db.exec(`CREATE TABLE timed (id int PRIMARY KEY); INSERT INTO timed SELECT generate_series(1, 50);`);
    const upkeep = startStoreUpkeep({ db, log: pino({ level: 'silent' }) }, 20);
    const deadline = Date.now() + 10_000;
    const analyzed = async () => (await db.query<{ n: number }>(`SELECT reltuples::int AS n FROM pg_class WHERE relname = 'timed'`))[0]!.n === 50;
    while (!(await analyzed()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await upkeep.stop();
    assert.ok(await analyzed(), 'the first pass analyzes');
  });

  it('leaves a PostgreSQL server to its own autovacuum', async () => {
    const server = { kind: 'pg', query: () => assert.fail('no query'), exec: () => assert.fail('no statement') } as unknown as Db;
    const upkeep = startStoreUpkeep({ db: server, log: pino({ level: 'silent' }) }, 1);
    await new Promise((r) => setTimeout(r, 20));
    await upkeep.stop();
  });
});
