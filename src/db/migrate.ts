// Applies the plain SQL files of ./migrations in order, once, under an advisory lock,
// so that nodes starting together do not race.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any fixed 64-bit key; ours spells "kw-migr". Passed as text: it is above 2^53, where a JS number rounds.
const MIGRATION_LOCK_KEY = BigInt('0x6b772d6d696772').toString();

export interface Migration { version: number; name: string; sql: string }

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 4)), name: f.slice(5, -4), sql: readFileSync(dir + f, 'utf8') }));
}

/** Returns the versions it applied. */
export async function migrate(db: Db, migrations = listMigrations()): Promise<number[]> {
  return db.transaction(async (tx) => {
    // Another node may be applying a long migration under it.
    await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_KEY], { timeoutMs: Infinity });
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}

