// Rollups in the store. The result writer folds each batch into the hourly rows (one locking read of
// the cursors, one upsert of the touched hours, one upsert of the cursors); the history sweep moves
// hourly rows past HOURLY_KEEP_DAYS into daily ones (`compactHours`). So a daily read takes the
// daily rows and the hourly rows of the same range together: every stretch is in exactly one row.
// Writing one row a result instead of two (hour and day) took about a quarter off the embedded
// store's cost per check (bench:checks, one pair of runs).
import type { Executor } from '../db/db.js';
import type { ResultStatus } from '../probes/types.js';
import { fromSql, toSqlArray } from './histogram.js';
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

interface CursorRow { target_id: string; region: string; checked_at: Date; status: ResultStatus; stale_after_ms: number | null }

const key = (targetId: string, region: string): string => `${targetId} ${region}`;

/** Folds `records` into the rollups and cursors; call inside the transaction that inserts them. */
export async function foldIntoRollups(tx: Executor, records: readonly CheckResultRecord[]): Promise<void> {
  const series = new Map<string, { targetId: string; region: string; observations: Observation[] }>();
  for (const r of records) {
    const k = key(r.targetId, r.region);
    let s = series.get(k);
    if (!s) series.set(k, s = { targetId: r.targetId, region: r.region, observations: [] });
    s.observations.push(observationOf(r, r.checkedAt.getTime()));
  }
  const ordered = [...series.values()].sort((a, b) => (a.targetId < b.targetId ? -1 : a.targetId > b.targetId ? 1 : a.region < b.region ? -1 : a.region > b.region ? 1 : 0));

  // Locked in one order, so two nodes writing results of the same monitors wait instead of deadlocking.
  const stored = await tx.query<CursorRow>(
    `SELECT c.target_id, c.region, c.checked_at, c.status, c.stale_after_ms FROM result_cursors c
       JOIN unnest($1::uuid[], $2::text[]) AS k(target_id, region) ON c.target_id = k.target_id AND c.region = k.region
     ORDER BY c.target_id, c.region FOR UPDATE OF c`,
    [ordered.map((s) => s.targetId), ordered.map((s) => s.region)], { prepared: 'rollup_cursors_lock' });
  const cursors = new Map(stored.map((c) => [key(c.target_id, c.region), { at: c.checked_at.getTime(), status: c.status, staleAfterMs: c.stale_after_ms } satisfies Cursor]));

  const rows: { targetId: string; region: string; start: number; agg: Aggregate }[] = [];
  const moved: { targetId: string; region: string; cursor: Cursor }[] = [];
  for (const s of ordered) {
    s.observations.sort((a, b) => a.at - b.at);
    const before = cursors.get(key(s.targetId, s.region)) ?? null;
    const buckets = new Buckets(HOUR_MS);
    const after = accumulate(buckets, before, s.observations);
    for (const [start, agg] of buckets.byStart) rows.push({ targetId: s.targetId, region: s.region, start, agg });
    if (after && after !== before) moved.push({ targetId: s.targetId, region: s.region, cursor: after });
  }
  await upsertRollups(tx, rows);
  if (!moved.length) return;
  await tx.query(
    `INSERT INTO result_cursors (target_id, region, checked_at, status, stale_after_ms)
     SELECT k.target_id, k.region, k.checked_at, k.status, k.stale_after_ms
       FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[], $5::bigint[]) AS k(target_id, region, checked_at, status, stale_after_ms)
       JOIN targets t ON t.id = k.target_id
     ON CONFLICT (target_id, region) DO UPDATE
       SET checked_at = excluded.checked_at, status = excluded.status, stale_after_ms = excluded.stale_after_ms
       WHERE excluded.checked_at > result_cursors.checked_at`,
    [moved.map((m) => m.targetId), moved.map((m) => m.region), moved.map((m) => new Date(m.cursor.at).toISOString()),
      moved.map((m) => m.cursor.status), moved.map((m) => m.cursor.staleAfterMs)], { prepared: 'rollup_cursors_save' });
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
 * beside it (a late result's write waits for the delete, then makes a new hourly row, which the
 * next sweep moves). A monitor deleted meanwhile fails the batch on its foreign key; the next
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
  const rows = await db.query<{ region: string; checked_at: Date; status: ResultStatus; duration_ms: number; timings: CheckResultRecord['timings'] | null; stale_after_ms: number | null }>(
    `SELECT p.region, p.checked_at, p.status, p.duration_ms, p.timings, p.stale_after_ms
       FROM result_cursors c
       CROSS JOIN LATERAL (
         SELECT region, checked_at, status, duration_ms, timings, stale_after_ms FROM check_results
          WHERE target_id = $1 AND region = c.region AND checked_at < $2
          ORDER BY checked_at DESC LIMIT 1) p
      WHERE c.target_id = $1${filter('c.region')}
     UNION ALL
     SELECT region, checked_at, status, duration_ms, timings, stale_after_ms FROM check_results
      WHERE target_id = $1 AND checked_at >= $2 AND checked_at < $3${filter('region')}
     ORDER BY checked_at`,
    params);
  return rows.map((r) => ({
    region: r.region,
    observation: observationOf({ ...r, timings: r.timings ?? undefined, staleAfterMs: r.stale_after_ms ?? undefined }, r.checked_at.getTime()),
  }));
}

/** Each region's latest result, the start of a stretch no rollup holds yet. */
export async function readCursors(db: Executor, targetId: string, region?: string): Promise<{ region: string; cursor: Cursor }[]> {
  const params: unknown[] = [targetId];
  const filter = region === undefined ? '' : ` AND region = $${params.push(region)}`;
  const rows = await db.query<CursorRow>(
    `SELECT target_id, region, checked_at, status, stale_after_ms FROM result_cursors WHERE target_id = $1${filter}`, params);
  return rows.map((c) => ({ region: c.region, cursor: { at: c.checked_at.getTime(), status: c.status, staleAfterMs: c.stale_after_ms } }));
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
