// What the processes of `npm run bench:checks` share: the monitors' addresses and interval, and the
// shapes of the engine process's IPC answers.

export const INTERVAL_SECS = 10;
export const INTERVAL_MS = INTERVAL_SECS * 1000;
/** Monitors per POST /api/v1/targets/bulk (the route's own cap). */
export const BULK_MAX = 10_000;

/**
 * Monitor i's own loopback address: 127.1.1.1 onwards, never .0 or .255 in the last two octets.
 * Linux routes all of 127/8 to `lo`, so a server on 0.0.0.0 answers every one of them.
 */
export function addressOf(i: number): string {
  return `127.${1 + Math.floor(i / 62_500)}.${1 + (Math.floor(i / 250) % 250)}.${1 + (i % 250)}`;
}

/** The engine process's options (argv[3] of bench/checks-node.ts, as JSON). */
export interface NodeOptions {
  dataDir: string;
  databaseUrl?: string;
  operatorSecret: string;
  /** Shared by every process of a run: nodes on one PostgreSQL database must share the key. */
  kek: string;
  port: number;
  monitors: number;
  leaseTtlMs?: number;
  /** Time every statement the engine awaits (bench:checks --statements). */
  statements?: boolean;
}

/** One statement's share of the window (`--statements`): calls, and the time they were awaited. */
export interface StatementTime { sql: string; calls: number; ms: number }

/** What `status` answers. */
export interface NodeStatus {
  scheduled: number;
  shards: number[];
  /** The scheduler's metrics as a registry holds them: counters, and the lag histogram's buckets as `name{le=x}`. */
  counters: Record<string, number>;
  /** Where the engine's memory is, in MB: V8's heap (used of total), buffers outside it, the size of the embedded store's WASM memory (PGlite only; an ArrayBuffer, so also in external). */
  memory: { heapUsed: number; heapTotal: number; external: number; wasm: number | null; live?: number };
}

/** What `results` answers: columns, not rows, to keep the IPC message small. */
export interface ResultColumns {
  targetIds: string[];
  /** The target of each result, as an index into `targetIds`. */
  target: number[];
  /** checked_at, epoch ms. */
  at: number[];
  durationMs: number[];
  statuses: Record<string, number>;
  /** A few distinct errors, to tell a run against a dead server from a real one. */
  errors: string[];
}

/** The results of [from, to) and the monitors, as the analysis reads them (both stores). */
export const RESULTS_SQL = `SELECT target_id, round(extract(epoch FROM checked_at) * 1000)::float8 AS at, status, duration_ms, error
  FROM check_results WHERE checked_at >= $1 AND checked_at < $2`;
export const TARGETS_SQL = 'SELECT id FROM targets ORDER BY id';
export const COUNT_SQL = 'SELECT count(*)::int AS n FROM check_results WHERE checked_at >= $1 AND checked_at < $2';

export interface ResultRow { target_id: string; at: number; status: string; duration_ms: number; error: string | null }

export function resultColumnsOf(rows: readonly ResultRow[], targets: readonly { id: string }[]): ResultColumns {
  const index = new Map(targets.map((t, i) => [t.id, i]));
  const out: ResultColumns = { targetIds: targets.map((t) => t.id), target: [], at: [], durationMs: [], statuses: {}, errors: [] };
  for (const r of rows) {
    out.target.push(index.get(r.target_id)!);
    out.at.push(Number(r.at));
    out.durationMs.push(r.duration_ms);
    out.statuses[r.status] = (out.statuses[r.status] ?? 0) + 1;
    if (r.error && out.errors.length < 5 && !out.errors.includes(r.error)) out.errors.push(r.error);
  }
  return out;
}
