// A fresh, migrated store per test app: PGlite by default, PostgreSQL when DATABASE_URL is set.
// PGlite starts from a dump of a migrated template (initdb costs seconds; loading a dump, a fraction);
// PostgreSQL gets a new database cloned from a migrated template database. A child process's store
// (test/db/child-server.ts) is a copy of a migrated data dir, or a clone of the same template.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { CONFIG_KEYS } from '../../src/config/schema.js';
import { openPglite, openPostgres, type Db } from '../../src/db/db.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { randomToken, sha256 } from '../../src/shared/ids.js';

export const usePostgres = Boolean(process.env.DATABASE_URL);

const migrationsKey = sha256(listMigrations().map((m) => m.sql).join('\n')).replace(/[^a-zA-Z0-9]/g, '').slice(0, 16).toLowerCase();

export interface TestStore { db: Db; url?: string; drop(): Promise<void> }

export async function createTestStore(): Promise<TestStore> {
  return usePostgres ? createPostgresStore() : createPgliteStore();
}

async function pgliteTemplate(): Promise<Blob> {
  const dir = join(tmpdir(), 'keepwatch-test');
  const file = join(dir, `pglite-${migrationsKey}.tar`);
  if (!existsSync(file)) {
    const db = await openPglite();
    await migrate(db);
    const dump = await db.pglite.dumpDataDir('none');
    await db.close();
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}`;
    writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
    renameSync(tmp, file);
  }
  return new Blob([readFileSync(file)]);
}

/**
 * A migrated PGlite data dir, made once per migration set, for a test to copy where a child
 * process opens its own store (`test/db/child-server.ts`).
 */
export async function pgliteTemplateDir(): Promise<string> {
  const dir = join(tmpdir(), 'keepwatch-test', `pglite-${migrationsKey}-dir`);
  if (!existsSync(dir)) {
    const tmp = `${dir}.${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    const db = await openPglite({ dataDir: tmp, loadDataDir: await pgliteTemplate() });
    await db.close();
    try {
      renameSync(tmp, dir);
    } catch (err) {
      // Another test process made it first.
      rmSync(tmp, { recursive: true, force: true });
      if (!existsSync(dir)) throw err;
    }
  }
  return dir;
}

/** A served store's buffer pool by default: PGlite's own (PostgreSQL's 128 MB) takes about half as long again to start. */
const SHARED_BUFFERS_MB = CONFIG_KEYS['pglite.shared_buffers_mb']!.default as number;

async function createPgliteStore(): Promise<TestStore> {
  const db = await openPglite({ loadDataDir: await pgliteTemplate(), sharedBuffersMb: SHARED_BUFFERS_MB });
  return { db, drop: () => db.close() };
}

function adminUrl(database: string): string {
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs `fn` on an admin connection to the server of DATABASE_URL. */
export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A migrated template database per migration set; concurrent test processes agree through an advisory lock. */
async function ensurePostgresTemplate(): Promise<string> {
  const template = `kw_tpl_${migrationsKey}`;
  await withAdmin(async (client) => {
    await client.query('SELECT pg_advisory_lock(7771)');
    try {
      const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (rows.length) return;
      await client.query(`CREATE DATABASE ${template}`);
      const db = openPostgres(adminUrl(template), { max: 1 });
      try { await migrate(db); } finally { await db.close(); }
    } finally {
      await client.query('SELECT pg_advisory_unlock(7771)');
    }
  });
  return template;
}

/** Creates database `name` as a copy of the migrated template. */
export async function cloneTemplateDatabase(name: string): Promise<void> {
  const template = await ensurePostgresTemplate();
  await withAdmin(async (client) => {
    // CREATE DATABASE ... TEMPLATE needs the template unused; serialize clones across test processes.
    await client.query('SELECT pg_advisory_lock(7772)');
    try {
      await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
    } finally {
      await client.query('SELECT pg_advisory_unlock(7772)');
    }
  });
}

async function createPostgresStore(): Promise<TestStore> {
  const name = `kw_t_${randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
  await cloneTemplateDatabase(name);
  const url = adminUrl(name);
  const db = openPostgres(url, { max: 5 });
  return {
    db,
    url,
    async drop() {
      await db.close();
      await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
