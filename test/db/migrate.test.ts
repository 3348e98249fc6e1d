// Migrations: each file applied once and recorded; a second run applies nothing; nodes starting
// together on one PostgreSQL database agree through the advisory lock; `keepwatch migrate` works.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { openPglite, openPostgres, type Db } from '../../src/db/db.js';
import { listMigrations, migrate, type Migration } from '../../src/db/migrate.js';
import { randomToken } from '../../src/shared/ids.js';
import { usePostgres } from '../helpers/store.js';
import { childEnv, createChildStore, runCli } from './child-server.js';

const real = listMigrations();
// A probe migration that fails if applied twice and is slow enough for two runners to overlap.
const probe: Migration = { version: 9999, name: 'probe', sql: 'CREATE TABLE migrate_probe (n integer); INSERT INTO migrate_probe VALUES (1); SELECT pg_sleep(0.2);' };
const all = [...real, probe];

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try { await client.query(sql); } finally { await client.end(); }
}

/** A fresh, unmigrated database: PGlite in memory, or a new PostgreSQL database. */
async function freshDatabase(): Promise<{ open(): Promise<Db>; drop(): Promise<void> }> {
  if (!usePostgres) {
    const db = await openPglite();
    return { open: async () => db, drop: () => db.close() };
  }
  const name = `kw_m_${randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  const pools: Db[] = [];
  return {
    open: async () => { const db = openPostgres(url.toString(), { max: 2 }); pools.push(db); return db; },
    async drop() {
      await Promise.all(pools.map((p) => p.close()));
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

async function recorded(db: Db): Promise<Array<{ version: number; name: string }>> {
  return db.query('SELECT version, name FROM schema_migrations ORDER BY version');
}

describe('migrate()', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => { for (const c of cleanups) await c(); });

  it('applies every file once, records it, and applies nothing the second time', async () => {
    assert.ok(real.length >= 1);
    assert.deepEqual(real.map((m) => m.version), [...real.map((m) => m.version)].sort((a, b) => a - b));
    const fresh = await freshDatabase();
    cleanups.push(fresh.drop);
    const db = await fresh.open();
    assert.deepEqual(await migrate(db, all), all.map((m) => m.version));
    assert.deepEqual(await recorded(db), all.map((m) => ({ version: m.version, name: m.name })));
    assert.deepEqual(await migrate(db, all), []);
    assert.deepEqual(await db.query('SELECT n FROM migrate_probe'), [{ n: 1 }]);
    // The seeded region proves the real file ran.
    assert.deepEqual(await db.query(`SELECT id FROM regions`), [{ id: 'local' }]);
  });

  it('rolls a failing migration back whole and records nothing of the run', async () => {
    const fresh = await freshDatabase();
    cleanups.push(fresh.drop);
    const db = await fresh.open();
    const broken: Migration = { version: 9998, name: 'broken', sql: 'CREATE TABLE half_done (n integer); SELECT no_such_function();' };
    await assert.rejects(migrate(db, [...real, broken]));
    assert.equal((await db.query(`SELECT to_regclass('half_done') AS t`))[0]!.t, null);
    assert.equal((await db.query(`SELECT to_regclass('regions') AS t`))[0]!.t, null);
    assert.deepEqual(await migrate(db, real), real.map((m) => m.version));
  });

  if (usePostgres) {
    it('two nodes migrating one fresh database together apply each migration exactly once', async () => {
      const fresh = await freshDatabase();
      cleanups.push(fresh.drop);
      const [a, b] = [await fresh.open(), await fresh.open()];
      const results = await Promise.all([migrate(a, all), migrate(b, all)]);
      // One runner did the work, the other found it done; both succeeded.
      assert.deepEqual(results.map((r) => r.length).sort((x, y) => x - y), [0, all.length]);
      assert.deepEqual(await recorded(a), all.map((m) => ({ version: m.version, name: m.name })));
      assert.deepEqual(await a.query('SELECT n FROM migrate_probe'), [{ n: 1 }]);
    });
  } else {
    it('two migrate() calls on one embedded store apply each migration exactly once', async () => {
      const fresh = await freshDatabase();
      cleanups.push(fresh.drop);
      const db = await fresh.open();
      const results = await Promise.all([migrate(db, all), migrate(db, all)]);
      assert.deepEqual(results.map((r) => r.length).sort((x, y) => x - y), [0, all.length]);
      assert.deepEqual(await db.query('SELECT n FROM migrate_probe'), [{ n: 1 }]);
    });
  }
});

describe('keepwatch migrate', () => {
  it('migrates the configured store, exits 0, and a second run applies nothing', async () => {
    const store = await createChildStore({ empty: true });
    try {
      const env = childEnv(store, 0, { KEEPWATCH_LOG__LEVEL: 'info' });
      const first = await runCli(['migrate'], env);
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /migrations applied/);
      const second = await runCli(['migrate'], env);
      assert.equal(second.code, 0, second.stderr);
      assert.match(second.stdout, /no pending migrations/);
      const db = store.databaseUrl ? openPostgres(store.databaseUrl, { max: 1 }) : await openPglite({ dataDir: join(store.dataDir, 'pg') });
      try {
        assert.deepEqual((await recorded(db)).map((r) => r.version), listMigrations().map((m) => m.version));
      } finally {
        await db.close();
      }
    } finally {
      await store.drop();
    }
  });
});
