// Vacuuming for the embedded store. PGlite runs PostgreSQL as one backend with no autovacuum
// launcher (`autovacuum` reads "on" but nothing acts on it), so without this no dead row is ever
// reclaimed: tables that churn (cursors, streaks, heartbeats, rollups) and tables the history sweep
// trims grow without bound, indexes bloat, planner statistics never move, and transaction ids are
// never frozen. A PostgreSQL server's own autovacuum does all of this; there this is not started.
//
// Each table is vacuumed in a statement of its own, smallest first: the embedded store runs one
// statement at a time, so short statements let queued queries in between. VACUUM only visits pages
// changed since the last one (the visibility map), so a pass costs what the interval wrote.
import type { Logger } from 'pino';
import type { Db } from './db.js';

/** How often the embedded store is vacuumed. */
export const VACUUM_EVERY_MS = 10 * 60_000;
/** Every this many passes also refreshes planner statistics (ANALYZE samples each table). */
const ANALYZE_EVERY_PASSES = 6;

export interface UpkeepReport { tables: number; analyzed: boolean; ms: number }

const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** One pass: VACUUM (with ANALYZE when asked) of every table of the public schema. */
export async function vacuumTables(db: Db, { analyze = false } = {}): Promise<UpkeepReport> {
  const started = performance.now();
  const tables = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'm') ORDER BY pg_relation_size(c.oid), c.relname`);
  for (const { name } of tables) await db.exec(`VACUUM ${analyze ? '(ANALYZE) ' : ''}${quoteIdent(name)}`);
  return { tables: tables.length, analyzed: analyze, ms: Math.round(performance.now() - started) };
}

/** Vacuums the embedded store every VACUUM_EVERY_MS; nothing on PostgreSQL (its autovacuum does it). */
export function startStoreUpkeep(deps: { db: Db; log: Logger }, everyMs = VACUUM_EVERY_MS): { stop(): Promise<void> } {
  if (deps.db.kind !== 'pglite') return { stop: async () => {} };
  let passes = 0;
  let running: Promise<void> | null = null;
  const run = (): void => {
    if (running) return;
    const analyze = passes++ % ANALYZE_EVERY_PASSES === 0;
    running = vacuumTables(deps.db, { analyze })
      .then((report) => deps.log.info({ vacuum: report }, 'embedded store vacuumed'))
      .catch((err: unknown) => deps.log.error({ err }, 'vacuuming the embedded store failed; the next pass retries'))
      .finally(() => { running = null; });
  };
  const every = setInterval(run, everyMs);
  every.unref();
  return {
    async stop() {
      clearInterval(every);
      await running;
    },
  };
}
