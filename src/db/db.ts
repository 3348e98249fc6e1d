// One executor interface over both stores: embedded PGlite and PostgreSQL through `pg`.
import { mkdirSync } from 'node:fs';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { literalParams } from './arrays.js';
import { lockDataDir } from './data-dir-lock.js';
import { executeStatement } from './sql-literal.js';

export type Row = Record<string, unknown>;

export interface QueryOptions {
  /**
   * Keep the statement prepared under this name (parsed and planned once, not per call) on each
   * PostgreSQL connection, and in the embedded store's one session: for fixed SQL on a hot path
   * only, as every name stays for the connection's life.
   */
  prepared?: string;
}

export interface Executor {
  query<T = Row>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Db extends Executor {
  readonly kind: 'pglite' | 'pg';
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Executor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// int8 counts arrive as strings from `pg`; every int8 we store fits a double.
const INT8_OID = 20;
const pgTypes = {
  getTypeParser: (oid: number, format?: string) =>
    oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text'),
};

const pgQuery = (text: string, values?: readonly unknown[], options?: QueryOptions): pg.QueryConfig =>
  ({ text, values: literalParams(values), ...(options?.prepared && { name: options.prepared }) });

export function openPostgres(url: string, max = 10): Db {
  const pool = new pg.Pool({ connectionString: url, max, types: pgTypes, idleTimeoutMillis: 10_000 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return {
    kind: 'pg',
    async query<T>(sql: string, params?: readonly unknown[], options?: QueryOptions) {
      return (await pool.query(pgQuery(sql, params, options))).rows as T[];
    },
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: async <T>(sql: string, p?: readonly unknown[], o?: QueryOptions) => (await client.query(pgQuery(sql, p, o))).rows as T[],
          exec: async (sql) => void (await client.query(sql)),
        });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    exec: async (sql) => void (await pool.query(sql)),
    close: () => pool.end(),
  };
}

export interface PgliteOptions {
  /** Directory of the data files; omitted means in memory. */
  dataDir?: string;
  /** A dump (from `dumpDataDir`) to start from: tests start from a migrated template. */
  loadDataDir?: Blob | File;
  /**
   * The embedded server's buffer pool. It lives in the WASM heap, which never shrinks, so it is most
   * of the process's RSS; pages it misses come from the OS page cache. Unset: PostgreSQL's 128 MB.
   */
  sharedBuffersMb?: number;
}

export async function openPglite(options: PgliteOptions = {}): Promise<Db & { pglite: PGlite }> {
  let unlock = (): void => {};
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    unlock = lockDataDir(options.dataDir);
  }
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(options.dataDir, {
      ...(options.loadDataDir && { loadDataDir: options.loadDataDir }),
      startParams: [
        ...PGlite.defaultStartParams,
        // Its pages are in its buffer pool or the OS page cache, so a random read costs what a
        // sequential one does. At PostgreSQL's disk-seek default (4) a batch of a few hundred rows
        // joined to its monitors was planned as a scan of every monitor.
        '-c', 'random_page_cost=1.1',
        ...(options.sharedBuffersMb ? ['-c', `shared_buffers=${options.sharedBuffersMb}MB`] : []),
      ],
    });
  } catch (err) {
    unlock();
    throw err;
  }
  // Every query is one statement; JSON and timestamps arrive parsed like `pg` does. PGlite's driver
  // parses and plans each query afresh, which for a batch statement joined to thousands of monitors
  // cost more than running it; a named one is prepared once in the session (SQL PREPARE, which
  // outlives transactions) and run by EXECUTE with its parameters as literals.
  const prepared = new Set<string>();
  const run = async <T>(q: Pick<PGlite, 'query' | 'exec'>, sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]> => {
    const name = options?.prepared;
    if (!name) return (await q.query<T>(sql, literalParams(params))).rows;
    if (!prepared.has(name)) {
      await q.exec(`PREPARE ${name} AS ${sql}`);
      prepared.add(name);
    }
    const [result] = await q.exec(executeStatement(name, literalParams(params) ?? []));
    return result!.rows as T[];
  };
  return {
    kind: 'pglite',
    pglite,
    query: (sql, params, options) => run(pglite, sql, params, options),
    exec: async (sql) => void (await pglite.exec(sql)),
    transaction: (fn) => pglite.transaction((tx) => fn({ query: (sql, params, options) => run(tx, sql, params, options), exec: async (sql) => void (await tx.exec(sql)) })),
    close: async () => {
      await pglite.close();
      unlock();
    },
  };
}
