// Rollups in the store. The rollup folder (rollup-folder.ts) folds each monitor-region's new results
// into the hourly rows (one locking read of the cursors, one read of the results after them, one
// upsert of the touched hours, one update of the cursors); the history sweep moves
// hourly rows past HOURLY_KEEP_DAYS into daily ones (`compactHours`). So a daily read takes the
// daily rows and the hourly rows of the same range together: every stretch is in exactly one row.
// Writing one row a result instead of two (hour and day) took about a quarter off the embedded
// store's cost per check (bench:checks, one pair of runs).
import type { Executor } from '../db/db.js';
import type { ResultStatus } from '../probes/types.js';
import { fromSql, toSqlArray } from './histogram.js';
import { timingsArray, timingsOf } from './store.js';
import { accumulate, Buckets, emptyAggregate, PHASES, STATUSES, type Aggregate, type Cursor, type Observation } from './rollup.js';
import { NO_PROBE_REGION, type CheckResultRecord } from './types.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** Hourly rollups are kept this long; then the sweep moves them into daily ones. */
export const HOURLY_KEEP_DAYS = 35;
export type Granularity = 'hour' | 'day';

export function observationOf(r: Pick<CheckResultRecord, 'status' | 'duration_ms' | 'timings' | 'region' | 'staleAfterMs'>, at: number): Observation {
  return {
    at, status: r.status, durationMs: Math.max(0, Math.round(r.duration_ms)), timings: r.timings ?? null,
    measured: r.region !== NO_PROBE_REGION, staleAfterMs: r.staleAfterMs ?? null,
  };
}

interface CursorRow { target_id: string; region: string; checked_at: Date | null; status: ResultStatus | null; stale_after_ms: number | null }

const cursorOf = (c: CursorRow): Cursor | null =>
  c.checked_at === null ? null : { at: c.checked_at.getTime(), status: c.status!, staleAfterMs: c.stale_after_ms };

/** A monitor-region: the unit rollups and cursors are kept by. */
export interface Pair { targetId: string; region: string }

export const pairKey = (targetId: string, region: string): string => `${targetId} ${region}`;

/**
 * Gives each pair a cursor row if it has none (nothing folded yet), in the transaction that writes
 * its first results: from then on every result not yet folded lies after a cursor, where the
 * folder and the readers find it. Pairs of a monitor deleted meanwhile are skipped.
 */
export async function ensureCursors(tx: Executor, pairs: readonly Pair[]): Promise<void> {
  if (!pairs.length) return;
  await tx.query(
    `INSERT INTO result_cursors (target_id, region)
     SELECT k.target_id, k.region FROM unnest($1::uuid[], $2::text[]) AS k(target_id, region) JOIN targets t ON t.id = k.target_id
     ON CONFLICT (target_id, region) DO NOTHING`,
    [pairs.map((p) => p.targetId), pairs.map((p) => p.region)], { prepared: 'rollup_cursors_ensure' });
}

/**
 * A result after a cursor; `at` is its checked_at in epoch ms (a number parses far cheaper than a
 * timestamp), `timings` its phase columns in PHASES order (`timingsArray`).
 */
interface UnfoldedRow { at: number; status: ResultStatus; duration_ms: number; timings: (number | null)[]; stale_after_ms: number | null }

/** An UnfoldedRow as the fold reads it, with its cursor's ordinal `i` first. */
type UnfoldedTuple = [i: number, at: number, status: ResultStatus, duration_ms: number, timings: UnfoldedRow['timings'], stale_after_ms: number | null];

const observationOfRow = (r: UnfoldedRow, region: string): Observation =>
  observationOf({ status: r.status, duration_ms: r.duration_ms, timings: timingsOf(r.timings) ?? undefined, region, staleAfterMs: r.stale_after_ms ?? undefined }, r.at);

/**
 * Whether result `r` comes after its pair's cursor `c` (every result, while nothing is folded). A
 * range on `check_results_by_target`: an `OR` for the empty cursor left only the monitor in the
 * index condition, and read the pair's whole history to find the minute after its cursor.
 */
const afterCursor = (r: string): string => `${r}.checked_at > coalesce(c.checked_at, '-infinity')`;

/** Each cursor `c` joined to the results after it (none: one row of nulls). */
export const RESULTS_AFTER_CURSOR = `LEFT JOIN LATERAL (
    SELECT x.checked_at, (extract(epoch FROM x.checked_at) * 1000)::float8 AS at, x.status, x.duration_ms, ${timingsArray('x')} AS timings, x.stale_after_ms
      FROM check_results x
     WHERE x.target_id = c.target_id AND x.region = c.region AND ${afterCursor('x')}) r ON true`;

/**
 * Folds every result after each pair's cursor into the hourly rollups and moves the cursor on, in
 * the caller's transaction. The cursors are locked first, in one order: two nodes folding the same
 * pair take turns, and the second finds nothing left after the cursor the first moved.
 */
export async function foldPairs(tx: Executor, pairs: readonly Pair[]): Promise<void> {
  if (!pairs.length) return;
  // Locked as the statement sorts them: one order for every node.
  const locked = await tx.query<CursorRow>(
    `SELECT c.target_id, c.region, c.checked_at, c.status, c.stale_after_ms FROM result_cursors c
       JOIN unnest($1::uuid[], $2::text[]) AS k(target_id, region) ON c.target_id = k.target_id AND c.region = k.region
     ORDER BY c.target_id, c.region FOR UPDATE OF c`,
    [pairs.map((p) => p.targetId), pairs.map((p) => p.region)], { prepared: 'rollup_cursors_lock' });
  if (!locked.length) return;
  // Read after the lock, in a statement of its own: it sees every result committed before it. One
  // JSON value, not a row a result: the embedded store spends more handing a row over than finding it.
  const [read] = await tx.query<{ unfolded: UnfoldedTuple[] }>(
    `SELECT coalesce(json_agg(json_build_array(k.i, r.at, r.status, r.duration_ms, r.timings, r.stale_after_ms) ORDER BY k.i, r.checked_at), '[]') AS unfolded
       FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS k(target_id, region, i)
       JOIN result_cursors c ON c.target_id = k.target_id AND c.region = k.region
       ${RESULTS_AFTER_CURSOR}
      WHERE r.checked_at IS NOT NULL`,
    [locked.map((c) => c.target_id), locked.map((c) => c.region)], { prepared: 'rollup_unfolded_read' });
  // By the locked cursor's position; a result names it by its (1-based) ordinal rather than its ids.
  const observations: Observation[][] = locked.map(() => []);
  for (const [i, at, status, duration_ms, timings, stale_after_ms] of read!.unfolded) {
    observations[i - 1]!.push(observationOfRow({ at, status, duration_ms, timings, stale_after_ms }, locked[i - 1]!.region));
  }

  const rows: { targetId: string; region: string; start: number; agg: Aggregate }[] = [];
  const moved: { targetId: string; region: string; cursor: Cursor }[] = [];
  for (const [i, c] of locked.entries()) {
    const list = observations[i]!;
    if (!list.length) continue;
    const before = cursorOf(c);
    const buckets = new Buckets(HOUR_MS);
    const after = accumulate(buckets, before, list);
    for (const [start, agg] of buckets.byStart) rows.push({ targetId: c.target_id, region: c.region, start, agg });
    if (after && after !== before) moved.push({ targetId: c.target_id, region: c.region, cursor: after });
  }
  await upsertRollups(tx, rows);
  if (!moved.length) return;
  await tx.query(
    `UPDATE result_cursors c SET checked_at = k.checked_at, status = k.status, stale_after_ms = k.stale_after_ms
       FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[], $5::bigint[]) AS k(target_id, region, checked_at, status, stale_after_ms)
      WHERE c.target_id = k.target_id AND c.region = k.region`,
    [moved.map((m) => m.targetId), moved.map((m) => m.region), moved.map((m) => new Date(m.cursor.at).toISOString()),
      moved.map((m) => m.cursor.status), moved.map((m) => m.cursor.staleAfterMs)], { prepared: 'rollup_cursors_save' });
}

/** Pairs with results not folded yet: what a node that stopped before folding left behind. */
export async function pairsWithUnfolded(db: Executor): Promise<Pair[]> {
  const rows = await db.query<{ target_id: string; region: string }>(
    `SELECT c.target_id, c.region FROM result_cursors c
      WHERE EXISTS (SELECT 1 FROM check_results r WHERE r.target_id = c.target_id AND r.region = c.region AND ${afterCursor('r')})`);
  return rows.map((r) => ({ targetId: r.target_id, region: r.region }));
}

const COUNT_COLUMNS = [
  ...STATUSES.map((s) => `checks_${s}`), ...STATUSES.map((s) => `ms_${s}`), 'latency_count', 'latency_sum',
  ...PHASES.flatMap((p) => [`${p}_sum`, `${p}_count`]),
];

/** An aggregate's values in COUNT_COLUMNS order (one call a result written: a plain loop, no spreads). */
function countValues(agg: Aggregate): number[] {
  const out: number[] = [];
  for (const s of STATUSES) out.push(agg.checks[s]);
  for (const s of STATUSES) out.push(Math.round(agg.ms[s]));
  out.push(agg.latency.count, agg.latency.sum);
  for (const p of PHASES) out.push(agg.phases[p].sum, agg.phases[p].count);
  return out;
}

/**
 * How a row adds to the one stored under its key (`excluded` is the row added): counts and sums
 * add, the histograms merge, min and max hold over the rows that measured latency.
 */
const ADD_TO_STORED = `ON CONFLICT (target_id, granularity, bucket_start, region) DO UPDATE SET
       ${COUNT_COLUMNS.map((c) => `${c} = result_rollups.${c} + excluded.${c}`).join(', ')},
       latency_min = CASE WHEN result_rollups.latency_count = 0 THEN excluded.latency_min
                          WHEN excluded.latency_count = 0 THEN result_rollups.latency_min
                          ELSE least(result_rollups.latency_min, excluded.latency_min) END,
       latency_max = greatest(result_rollups.latency_max, excluded.latency_max),
       latency_hist = kw_hist_add(result_rollups.latency_hist, excluded.latency_hist)`;

async function upsertRollups(tx: Executor, rows: readonly { targetId: string; region: string; start: number; agg: Aggregate }[]): Promise<void> {
  if (!rows.length) return;
  const counts = rows.map((r) => countValues(r.agg));
  const columns = ['target_id', 'region', 'bucket_start', 'latency_min', 'latency_max', 'latency_hist', ...COUNT_COLUMNS];
  const types = ['uuid', 'text', 'timestamptz', 'float8', 'float8', 'text', ...COUNT_COLUMNS.map(() => 'float8')];
  const params: unknown[] = [
    rows.map((r) => r.targetId), rows.map((r) => r.region), rows.map((r) => new Date(r.start).toISOString()),
    rows.map((r) => r.agg.latency.min), rows.map((r) => r.agg.latency.max), rows.map((r) => toSqlArray(r.agg.latency.hist)),
    ...COUNT_COLUMNS.map((_, i) => counts.map((c) => c[i])),
  ];
  const source = (c: string): string => (c === 'latency_hist' ? 'r.latency_hist::integer[]' : `r.${c}`);
  await tx.query(
    `INSERT INTO result_rollups (granularity, ${columns.join(', ')})
     SELECT 'hour', ${columns.map(source).join(', ')}
       FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) AS r(${columns.join(', ')})
       JOIN targets t ON t.id = r.target_id
     ${ADD_TO_STORED}`,
    params, { prepared: 'rollup_hours_upsert' });
}

/**
 * Moves up to `batch` hourly rows that start before `before` into their UTC days' rows, in one
 * statement: a row is deleted and added in the same transaction, so it counts once whatever runs
 * beside it (a fold writing into an hour being moved waits for the delete, then makes a new
 * hourly row, which the next sweep moves). A monitor deleted meanwhile fails the batch on its foreign key; the next
 * sweep finds its rows gone. Returns how many hourly rows moved.
 */
export async function compactHours(db: Executor, before: Date, batch: number): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `WITH moved AS (
       DELETE FROM result_rollups WHERE ctid = ANY(ARRAY(
         SELECT ctid FROM result_rollups WHERE granularity = 'hour' AND bucket_start < $1 LIMIT ${batch}))
       RETURNING *),
     added AS (
       INSERT INTO result_rollups (target_id, region, granularity, bucket_start, latency_min, latency_max, latency_hist, ${COUNT_COLUMNS.join(', ')})
       SELECT target_id, region, 'day', date_bin('1 day', bucket_start, TIMESTAMPTZ '1970-01-01 00:00:00+00'),
              coalesce(min(latency_min) FILTER (WHERE latency_count > 0), 0), max(latency_max), kw_hist_sum(latency_hist),
              ${COUNT_COLUMNS.map((c) => `sum(${c})`).join(', ')}
         FROM moved GROUP BY 1, 2, 4
       ${ADD_TO_STORED}
       RETURNING 1)
     SELECT count(*)::int AS n FROM moved`,
    [before]);
  return row!.n;
}

interface RollupRow extends Record<string, unknown> {
  region: string;
  bucket_start: Date;
  latency_min: number;
  latency_max: number;
  hist_lower: number | null;
  hist_csv: string | null;
}

function aggregateOf(row: RollupRow): Aggregate {
  const agg = emptyAggregate();
  const n = (column: string): number => Number(row[column]);
  for (const s of STATUSES) {
    agg.checks[s] = n(`checks_${s}`);
    agg.ms[s] = n(`ms_${s}`);
  }
  agg.latency = {
    count: n('latency_count'), sum: n('latency_sum'), min: row.latency_min, max: row.latency_max,
    hist: fromSql(row.hist_lower, row.hist_csv),
  };
  for (const p of PHASES) agg.phases[p] = { sum: n(`${p}_sum`), count: n(`${p}_count`) };
  return agg;
}

export interface RollupQuery { targetId: string; granularity: Granularity; from: Date; to: Date; region?: string }

/**
 * Stored rollups whose bucket starts in `[from, to)`, oldest first. A daily read gets the hourly
 * rows of its range too (those not yet moved into days): the caller adds each into its day.
 */
export async function readRollups(db: Executor, q: RollupQuery): Promise<{ region: string; start: number; agg: Aggregate }[]> {
  const params: unknown[] = [q.targetId, q.granularity === 'day' ? ['day', 'hour'] : ['hour'], q.from, q.to];
  const region = q.region === undefined ? '' : ` AND region = $${params.push(q.region)}`;
  const rows = await db.query<RollupRow>(
    `SELECT region, bucket_start, latency_min, latency_max, ${COUNT_COLUMNS.join(', ')},
            array_lower(latency_hist, 1) AS hist_lower, array_to_string(latency_hist, ',') AS hist_csv
       FROM result_rollups
      WHERE target_id = $1 AND granularity = ANY($2::text[]) AND bucket_start >= $3 AND bucket_start < $4${region}
      ORDER BY bucket_start`,
    params);
  return rows.map((row) => ({ region: row.region, start: row.bucket_start.getTime(), agg: aggregateOf(row) }));
}

export interface RawObservation { region: string; observation: Observation }

/**
 * Raw results of `[from, to)` oldest first, each region's last result before `from` included (its
 * stretch may reach into the range). Regions are those with a cursor: every region that ever wrote.
 */
export async function readRawObservations(db: Executor, targetId: string, from: Date, to: Date, region?: string): Promise<RawObservation[]> {
  const params: unknown[] = [targetId, from, to];
  const filter = (column: string): string => (region === undefined ? '' : ` AND ${column} = $4`);
  if (region !== undefined) params.push(region);
  const rows = await db.query<{ region: string; checked_at: Date; status: ResultStatus; duration_ms: number; timings: (number | null)[]; stale_after_ms: number | null }>(
    `SELECT p.region, p.checked_at, p.status, p.duration_ms, p.timings, p.stale_after_ms
       FROM result_cursors c
       CROSS JOIN LATERAL (
         SELECT region, checked_at, status, duration_ms, ${timingsArray('x')} AS timings, stale_after_ms FROM check_results x
          WHERE target_id = $1 AND region = c.region AND checked_at < $2
          ORDER BY checked_at DESC LIMIT 1) p
      WHERE c.target_id = $1${filter('c.region')}
     UNION ALL
     SELECT region, checked_at, status, duration_ms, ${timingsArray('x')} AS timings, stale_after_ms FROM check_results x
      WHERE target_id = $1 AND checked_at >= $2 AND checked_at < $3${filter('region')}
     ORDER BY checked_at`,
    params);
  return rows.map((r) => ({
    region: r.region,
    observation: observationOf({ ...r, timings: timingsOf(r.timings) ?? undefined, staleAfterMs: r.stale_after_ms ?? undefined }, r.checked_at.getTime()),
  }));
}

/**
 * Each region's latest folded result (null: nothing folded yet) and its results after it: the
 * stretch no rollup holds yet.
 */
export async function readUnfolded(db: Executor, targetId: string, region?: string): Promise<{ region: string; cursor: Cursor | null; observations: Observation[] }[]> {
  const params: unknown[] = [targetId];
  const filter = region === undefined ? '' : ` AND region = $${params.push(region)}`;
  // One statement: a cursor and the results after it from one snapshot, whatever a fold commits meanwhile.
  const rows = await db.query<CursorRow & Omit<UnfoldedRow, 'at' | 'status' | 'stale_after_ms'> & { at: number | null; result_status: ResultStatus; result_stale_after_ms: number | null }>(
    `SELECT c.target_id, c.region, c.checked_at, c.status, c.stale_after_ms,
            r.at, r.status AS result_status, r.duration_ms, r.timings, r.stale_after_ms AS result_stale_after_ms
       FROM (SELECT * FROM result_cursors WHERE target_id = $1${filter}) c
       ${RESULTS_AFTER_CURSOR}
      ORDER BY c.region, r.checked_at`, params);
  const byRegion = new Map<string, { region: string; cursor: Cursor | null; observations: Observation[] }>();
  for (const row of rows) {
    let entry = byRegion.get(row.region);
    if (!entry) byRegion.set(row.region, entry = { region: row.region, cursor: cursorOf(row), observations: [] });
    if (row.at === null) continue;
    const result = { at: row.at, status: row.result_status, duration_ms: row.duration_ms, timings: row.timings, stale_after_ms: row.result_stale_after_ms };
    entry.observations.push(observationOfRow(result, row.region));
  }
  return [...byRegion.values()];
}

/**
 * Declared incidents naming the monitor that count as downtime (a monitor's own incidents count
 * through its checks), as sorted, merged spans clipped to `clip`; an open one runs to `clip.to`.
 */
export async function readDeclaredDowntime(db: Executor, targetId: string, clip: { from: number; to: number }): Promise<{ from: number; to: number }[]> {
  const rows = await db.query<{ started_at: Date; ended_at: Date | null }>(
    `SELECT i.started_at, i.ended_at FROM incident_targets it JOIN incidents i ON i.id = it.incident_id
      WHERE it.target_id = $1 AND i.source = 'declared' AND i.counts_as_downtime
        AND i.started_at < $3 AND (i.ended_at IS NULL OR i.ended_at > $2)
      ORDER BY i.started_at`,
    [targetId, new Date(clip.from), new Date(clip.to)]);
  const spans: { from: number; to: number }[] = [];
  for (const row of rows) {
    const from = Math.max(row.started_at.getTime(), clip.from);
    const to = Math.min(row.ended_at?.getTime() ?? clip.to, clip.to);
    const last = spans.at(-1);
    if (last && from <= last.to) last.to = Math.max(last.to, to);
    else if (to > from) spans.push({ from, to });
  }
  return spans;
}
