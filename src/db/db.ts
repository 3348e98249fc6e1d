// One executor interface over both stores: embedded PGlite and PostgreSQL through `pg`.
import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
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
  /**
   * How long PostgreSQL may take to answer before the driver gives up on the statement and drops
   * its connection; `Infinity` waits as long as it takes (migrations, a lock another node's
   * migration holds). Unset: STATEMENT_DEADLINE_MS. PGlite runs in the process and ignores it.
   */
  timeoutMs?: number;
}

/**
 * A statement's default deadline on PostgreSQL. A connection whose server vanished without a reset
 * (a failover, a dropped route) otherwise holds its statement for the kernel's retransmission
 * timeout, some 15 minutes: a node would run no checks and answer no pings for that long.
 * Generous beside any statement the service runs; an answer this late is an outage either way.
 */
export const STATEMENT_DEADLINE_MS = 60_000;
// setTimeout's ceiling (about 24.8 days): `pg` arms a timer for every deadline and has no "none".
const NO_DEADLINE_MS = 2 ** 31 - 1;

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

/**
 * Timestamps (and their arrays) read by `pg`'s own parsers on both stores. PGlite's hand them to
 * `new Date(text)`, whose legacy parse reads years 0001-0099 as 19xx or 20xx, or not at all.
 */
const TIMESTAMP_OIDS = [1114, 1115, 1184, 1185];
const pgliteParsers = Object.fromEntries(TIMESTAMP_OIDS.map((oid) => [oid, pg.types.getTypeParser(oid, 'text')]));

type PgQuery = pg.QueryConfig & { query_timeout?: number };

const pgQuery = (text: string, values: readonly unknown[] | undefined, deadlineMs: number, options?: QueryOptions): PgQuery => ({
  text, values: literalParams(values), query_timeout: Math.max(1, Math.min(options?.timeoutMs ?? deadlineMs, NO_DEADLINE_MS)),
  ...(options?.prepared && { name: options.prepared }),
});

/** Scripts (migrations, VACUUM) take as long as they take. */
const pgScript = (text: string): PgQuery => ({ text, query_timeout: NO_DEADLINE_MS });

/** `pg` words a statement past its deadline so, with no code. */
const isPastDeadline = (err: unknown): boolean => err instanceof Error && err.message === 'Query read timeout';

/**
 * How long a new connection may take to be ready (TCP, TLS, startup, auth). Without it a server
 * that drops packets holds the connect, and every query waiting for it, for the OS's SYN timeout
 * (about two minutes), and one that accepts but never answers holds it for ever.
 */
export const CONNECT_DEADLINE_MS = 10_000;

export interface PostgresOptions {
  /** Connections in the pool. */
  max?: number;
  /** A new connection's deadline (the URL's `connect_timeout`, when it sets one). */
  connectDeadlineMs?: number;
  /** A statement's deadline unless its query says otherwise (tests shorten it). */
  statementDeadlineMs?: number;
}

export function openPostgres(url: string, options: PostgresOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString: url, max: options.max ?? 10, types: pgTypes, idleTimeoutMillis: 10_000,
    Client: clientWithConnectDeadline(options.connectDeadlineMs ?? CONNECT_DEADLINE_MS),
  });
  const deadlineMs = options.statementDeadlineMs ?? STATEMENT_DEADLINE_MS;
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return {
    kind: 'pg',
    // The pool drops a client whose query failed, so one past its deadline is never reused.
    async query<T>(sql: string, params?: readonly unknown[], options?: QueryOptions) {
      return (await pool.query(pgQuery(sql, params, deadlineMs, options))).rows as T[];
    },
    async transaction(fn) {
      const client = await pool.connect();
      // Set when the connection may be mid-statement or gone: it is dropped, not pooled again, and
      // the server rolls back the transaction of a connection that ends.
      let broken = false;
      try {
        await client.query(pgQuery('BEGIN', undefined, deadlineMs));
        const result = await fn({
          query: async <T>(sql: string, p?: readonly unknown[], o?: QueryOptions) => (await client.query(pgQuery(sql, p, deadlineMs, o))).rows as T[],
          exec: async (sql) => void (await client.query(pgScript(sql))),
        });
        await client.query(pgQuery('COMMIT', undefined, deadlineMs));
        return result;
      } catch (err) {
        // A ROLLBACK sent after a statement past its deadline would wait out a deadline of its own.
        if (isPastDeadline(err)) broken = true;
        else await client.query(pgQuery('ROLLBACK', undefined, deadlineMs)).catch(() => (broken = true));
        throw err;
      } finally {
        client.release(broken);
      }
    },
    exec: async (sql) => void (await pool.query(pgScript(sql))),
    close: () => pool.end(),
  };
}

/**
 * The pool's clients with a connect deadline of their own. The pool's `connectionTimeoutMillis`
 * would also fail a query waiting for a busy pool's next free connection, which is no outage.
 */
function clientWithConnectDeadline(ms: number): typeof pg.Client {
  return class extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: ms });
    }
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

/**
 * The embedded store's files are the owner's alone, as PostgreSQL demands of its data directory:
 * PGlite writes the files of its initdb with mode 0666 (WASM knows no umask), which anyone on the
 * host could rewrite. A walk of about a thousand files at each start; the files it makes later are 0600.
 */
function ownerOnly(dir: string): void {
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) ownerOnly(path);
    else if (entry.isFile()) chmodSync(path, 0o600);
  }
}

export async function openPglite(options: PgliteOptions = {}): Promise<Db & { pglite: PGlite }> {
  let unlock = (): void => {};
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    unlock = lockDataDir(options.dataDir);
  }
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(options.dataDir, {
      ...(options.loadDataDir && { loadDataDir: options.loadDataDir }),
      parsers: pgliteParsers,
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
  if (options.dataDir) ownerOnly(options.dataDir);
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
