// The heartbeat row as the ingest, the sweep and the record read it, and the statements that save
// a batch of changed states and pings at once (one statement each, whatever the batch size).
import { pgArray, type ArrayElement } from '../db/arrays.js';
import type { Db, Executor } from '../db/db.js';
import { NO_PROBE_REGION, type CheckResultRecord } from '../results/index.js';
import type { HeartbeatState, HeartbeatStatus, HeartbeatTiming, Judgement, PingSignal } from './verdict.js';

/** Whether a heartbeat's pings and silence count, over `targets t` joined to `orgs o`: running, not held, org alive. */
export const COUNTING_SQL = '(t.enabled AND t.held_at IS NULL AND o.deleted_at IS NULL)';

export interface HeartbeatRow {
  target_id: string;
  org_id: string;
  token_hash: string;
  sealed_token: string;
  created_at: Date;
  status: HeartbeatStatus;
  first_ping_at: Date | null;
  last_ping_at: Date | null;
  last_success_at: Date | null;
  last_start_at: Date | null;
  run_started_at: Date | null;
  last_fail_at: Date | null;
  last_exit_code: number | null;
  last_fail_ping_id: string | null;
  window_from: Date | null;
  due_at: Date | null;
  previous_token_hash: string | null;
  previous_expires_at: Date | null;
  previous_last_used_at: Date | null;
  /** URLs replaced before the previous one, still in their 24 hours: hashes and expiries by position. */
  retired_token_hashes: string[];
  retired_expires_at: Date[];
  rotated_at: Date | null;
}

const ms = (d: Date | null): number | null => (d === null ? null : d.getTime());

type StateColumns = 'status' | 'first_ping_at' | 'last_ping_at' | 'last_success_at' | 'last_start_at' | 'run_started_at' | 'last_fail_at' | 'last_exit_code' | 'window_from';

export function stateOf(row: Pick<HeartbeatRow, StateColumns>): HeartbeatState {
  return {
    status: row.status, firstPingAt: ms(row.first_ping_at), lastPingAt: ms(row.last_ping_at), lastSuccessAt: ms(row.last_success_at),
    lastStartAt: ms(row.last_start_at), runStartedAt: ms(row.run_started_at), lastFailAt: ms(row.last_fail_at),
    lastExitCode: row.last_exit_code, windowFrom: ms(row.window_from),
  };
}

/** The stored check of a heartbeat monitor, as the rule reads it. */
export const timingOf = (checkSpec: Record<string, unknown>): HeartbeatTiming => ({
  period: checkSpec.period as number, grace: checkSpec.grace as number, max_runtime: (checkSpec.max_runtime as number | null | undefined) ?? null,
});

export interface StateChange {
  targetId: string;
  state: HeartbeatState;
  dueAt: number | null;
  lastFailPingId: string | null;
  previousLastUsedAt: number | null;
}

/** A row's state as it stands: the start of every change saved through `saveStates`. */
export function changeOf(row: Pick<HeartbeatRow, StateColumns | 'target_id' | 'due_at' | 'last_fail_ping_id' | 'previous_last_used_at'>): StateChange {
  return {
    targetId: row.target_id, state: stateOf(row), dueAt: ms(row.due_at),
    lastFailPingId: row.last_fail_ping_id, previousLastUsedAt: ms(row.previous_last_used_at),
  };
}

/** The check result a verdict change writes: no probe region, no stale cap (it stands until changed). */
export function resultOf(row: Pick<HeartbeatRow, 'target_id' | 'org_id'>, judgement: Judgement, durationMs = 0): CheckResultRecord {
  return {
    targetId: row.target_id, orgId: row.org_id, region: NO_PROBE_REGION, checkedAt: new Date(judgement.at),
    status: judgement.status, duration_ms: durationMs, error: judgement.error,
  };
}

/**
 * A batch goes to a statement as one array per column, read back with `unnest`: far cheaper to build
 * and to parse than JSON objects. Times travel as epoch ms and become timestamps in the statement.
 */
type Column<T> = readonly [name: string, type: 'text' | 'uuid' | 'xid' | 'smallint' | 'integer' | 'boolean' | 'float8' | 'ms', value: (item: T) => ArrayElement];

const arraysOf = <T>(columns: ReadonlyArray<Column<T>>, items: readonly T[]): string[] =>
  columns.map(([, , value]) => pgArray(items.map(value)));
/** `unnest($n::type[], ...) AS alias(names)`, its parameters numbered from `first`. */
const unnestOf = <T>(columns: ReadonlyArray<Column<T>>, alias: string, first = 1): string =>
  `unnest(${columns.map(([, type], i) => `$${first + i}::${type === 'ms' ? 'float8' : type}[]`).join(', ')}) AS ${alias}(${columns.map(([name]) => name).join(', ')})`;
/** Each column's value as stored, read from `alias`. */
const valueOf = (alias: string, [name, type]: Column<never>): string => (type === 'ms' ? `to_timestamp(${alias}.${name} / 1000)` : `${alias}.${name}`);

/** The columns the rule reads and writes. */
const JUDGED: ReadonlyArray<Column<StateChange>> = [
  ['status', 'text', (c) => c.state.status], ['first_ping_at', 'ms', (c) => c.state.firstPingAt], ['last_ping_at', 'ms', (c) => c.state.lastPingAt],
  ['last_success_at', 'ms', (c) => c.state.lastSuccessAt], ['last_start_at', 'ms', (c) => c.state.lastStartAt],
  ['run_started_at', 'ms', (c) => c.state.runStartedAt], ['last_fail_at', 'ms', (c) => c.state.lastFailAt],
  ['last_exit_code', 'smallint', (c) => c.state.lastExitCode], ['window_from', 'ms', (c) => c.state.windowFrom], ['due_at', 'ms', (c) => c.dueAt],
  ['last_fail_ping_id', 'uuid', (c) => c.lastFailPingId],
];
const setJudged = (alias: string): string => JUDGED.map((column) => `${column[0]} = ${valueOf(alias, column)}`).join(', ');

const SAVED: ReadonlyArray<Column<StateChange>> = [
  ['target_id', 'uuid', (c) => c.targetId], ...JUDGED, ['previous_last_used_at', 'ms', (c) => c.previousLastUsedAt],
];
// Every row a transaction writes carries its id as `xmin`: one version for the whole batch.
const SAVE_STATES_SQL = `WITH saved AS (
    UPDATE heartbeats h SET ${setJudged('r')}, previous_last_used_at = ${valueOf('r', SAVED.at(-1)!)}
      FROM ${unnestOf(SAVED, 'r')} WHERE h.target_id = r.target_id
    RETURNING h.xmin)
  SELECT (SELECT xmin::text FROM saved LIMIT 1) AS version`;

/**
 * Saves each heartbeat's new state in one statement. Returns the rows' version as saved (`xmin`, the
 * id of the transaction that wrote them), valid once this transaction commits.
 */
export async function saveStates(tx: Executor, changes: readonly StateChange[]): Promise<string | null> {
  if (changes.length === 0) return null;
  const [row] = await tx.query<{ version: string | null }>(SAVE_STATES_SQL, arraysOf(SAVED, changes), { prepared: 'heartbeat_save_states' });
  return row!.version;
}

export interface PingRow {
  id: string;
  targetId: string;
  at: number;
  signal: PingSignal;
  exitCode: number | null;
  runMs: number | null;
  counted: boolean;
}

const PINGS: ReadonlyArray<Column<PingRow>> = [
  ['id', 'uuid', (p) => p.id], ['target_id', 'uuid', (p) => p.targetId], ['received_at', 'ms', (p) => p.at], ['signal', 'text', (p) => p.signal],
  ['exit_code', 'smallint', (p) => p.exitCode], ['run_ms', 'integer', (p) => p.runMs], ['counted', 'boolean', (p) => p.counted],
];
const INSERT_PINGS_SQL = `INSERT INTO heartbeat_pings (${PINGS.map(([name]) => name).join(', ')})
  SELECT ${PINGS.map((column) => valueOf('p', column)).join(', ')} FROM ${unnestOf(PINGS, 'p')}`;

export async function insertPings(tx: Executor, pings: readonly PingRow[]): Promise<void> {
  if (pings.length === 0) return;
  await tx.query(INSERT_PINGS_SQL, arraysOf(PINGS, pings), { prepared: 'heartbeat_insert_pings' });
}

const TIMING = {
  period: "(t.check_spec->>'period')::bigint::float8",
  grace: "(t.check_spec->>'grace')::bigint::float8",
  max_runtime: "(t.check_spec->>'max_runtime')::bigint::float8",
};
/**
 * Whether a heartbeat keeps URLs replaced before its previous one (`retired_token_hashes`): the
 * predicate of the index on them (migration 0028), which a lookup must repeat for the planner to use it.
 */
export const HAS_RETIRED_SQL = 'cardinality(retired_token_hashes) > 0';

/** A heartbeat's timing from its monitor's check, over `targets t`, in the shape of `HeartbeatTiming`. */
export const TIMING_SQL = Object.entries(TIMING).map(([name, sql]) => `${sql} AS ${name}`).join(', ');

/** A new state judged from a heartbeat's row at `version`. */
export interface JudgedFrom {
  targetId: string;
  version: string;
  now: StateChange;
}

const JUDGED_FROM: ReadonlyArray<Column<JudgedFrom>> = [
  ['target_id', 'uuid', (j) => j.targetId], ['version', 'xid', (j) => j.version],
  ...JUDGED.map(([name, type, value]): Column<JudgedFrom> => [name, type, (j) => value(j.now)]),
];
// One row back whatever the batch size (reading results costs, on PGlite most of all): the saved
// rows' version and the heartbeats not saved.
const SAVE_IF_UNCHANGED_SQL = `WITH s AS (SELECT * FROM ${unnestOf(JUDGED_FROM, 's')}),
  saved AS (
    UPDATE heartbeats h SET ${setJudged('s')} FROM s WHERE h.target_id = s.target_id AND h.xmin = s.version
    RETURNING h.target_id, h.xmin),
  logged AS (
    INSERT INTO heartbeat_pings (${PINGS.map(([name]) => name).join(', ')})
    SELECT ${PINGS.map((column) => valueOf('p', column)).join(', ')} FROM ${unnestOf(PINGS, 'p', JUDGED_FROM.length + 1)}
     WHERE p.target_id IN (SELECT target_id FROM saved))
  SELECT (SELECT xmin::text FROM saved LIMIT 1) AS version,
    array(SELECT target_id FROM s WHERE target_id NOT IN (SELECT target_id FROM saved)) AS lost`;

/**
 * Compare-and-set: saves each new state, and the pings judged into it, only where the heartbeat row
 * is still the version the judgement read, in one statement that is its own transaction. Any write
 * since gives the row a new `xmin`: the sweep's, a rotation's, another node's, and (migration 0026)
 * any change to how its monitor and org count its pings. Returns the saved rows' new version and the
 * heartbeats not saved (whose pings are not logged, and must be judged again under the row lock).
 */
export async function saveIfUnchanged(db: Executor, judged: readonly JudgedFrom[], pings: readonly PingRow[]): Promise<{ version: string | null; lost: Set<string> }> {
  const [row] = await db.query<{ version: string | null; lost: string[] }>(
    SAVE_IF_UNCHANGED_SQL, [...arraysOf(JUDGED_FROM, judged), ...arraysOf(PINGS, pings)], { prepared: 'heartbeat_save_if_unchanged' });
  return { version: row!.version, lost: new Set(row!.lost) };
}

/**
 * Whether a judged heartbeat is a routine success, which `saveRoutine` can save: every ping counted,
 * a success closing no run, and the state moved only by the success's time (last ping, last success
 * and the silence clock's start, all one time), its deadline, exit code and the rest unchanged.
 */
export function isRoutine(judged: JudgedFrom, saved: StateChange, pings: readonly PingRow[]): boolean {
  const { state, dueAt, lastFailPingId, previousLastUsedAt } = judged.now;
  const at = state.lastPingAt;
  return pings.every((p) => p.signal === 'success' && p.counted && p.runMs === null)
    && at !== null && state.lastSuccessAt === at && state.windowFrom === at
    && state.status === saved.state.status && state.firstPingAt === saved.state.firstPingAt && state.lastStartAt === saved.state.lastStartAt
    && state.runStartedAt === saved.state.runStartedAt && state.lastFailAt === saved.state.lastFailAt && state.lastExitCode === saved.state.lastExitCode
    && dueAt === saved.dueAt && lastFailPingId === saved.lastFailPingId && previousLastUsedAt === saved.previousLastUsedAt;
}

const ROUTINE_OF: ReadonlyArray<Column<JudgedFrom>> = [
  ['target_id', 'uuid', (j) => j.targetId], ['version', 'xid', (j) => j.version], ['at', 'ms', (j) => j.now.state.lastPingAt],
];
const ROUTINE_PINGS: ReadonlyArray<Column<PingRow>> = [
  ['id', 'uuid', (p) => p.id], ['target_id', 'uuid', (p) => p.targetId], ['received_at', 'ms', (p) => p.at], ['exit_code', 'smallint', (p) => p.exitCode],
];
/** The routine pings of the heartbeats in `saved` (a CTE of their target_id) into the log. */
const LOG_ROUTINE = `INSERT INTO heartbeat_pings (${ROUTINE_PINGS.map(([name]) => name).join(', ')}, signal, counted)
    SELECT ${ROUTINE_PINGS.map((column) => valueOf('p', column)).join(', ')}, 'success', true FROM ${unnestOf(ROUTINE_PINGS, 'p', ROUTINE_OF.length + 1)}
     WHERE p.target_id IN (SELECT target_id FROM saved)`;
const ROUTINE_LOST = 'array(SELECT target_id FROM s WHERE target_id NOT IN (SELECT target_id FROM saved)) AS lost';
const ROUTINE_S = `s AS (SELECT target_id, version, ${valueOf('s', ROUTINE_OF[2]!)} AS at FROM ${unnestOf(ROUTINE_OF, 's')})`;

/** Sets the three times in the row (which takes a new version) and logs the pings. */
const SAVE_ROUTINE_SQL = `WITH ${ROUTINE_S},
  saved AS (
    UPDATE heartbeats h SET last_ping_at = s.at, last_success_at = s.at, window_from = s.at FROM s WHERE h.target_id = s.target_id AND h.xmin = s.version
    RETURNING h.target_id, h.xmin),
  logged AS (${LOG_ROUTINE})
  SELECT (SELECT xmin::text FROM saved LIMIT 1) AS version, ${ROUTINE_LOST}`;

/** Logs the pings only, the row left as it is (its version kept). */
const LOG_ROUTINE_SQL = `WITH ${ROUTINE_S},
  saved AS (SELECT h.target_id FROM heartbeats h JOIN s ON h.target_id = s.target_id WHERE h.xmin = s.version),
  logged AS (${LOG_ROUTINE})
  SELECT NULL::text AS version, ${ROUTINE_LOST}`;

/**
 * `saveIfUnchanged` for routine successes only (`isRoutine`), the common ping. A routine success
 * moves three times of its heartbeat, all to its own arrival: last ping, last success and the
 * silence clock's start.
 *
 * On PGlite it writes only its log row, and the heartbeat row keeps its version: whoever next judges
 * or shows the heartbeat reads those times from the log (`LOGGED_SUCCESS_SQL`): the row's update
 * is saved (bench/README.md, bench:pings stop 28). That is sound only where one
 * connection runs every statement in turn. With concurrent connections (PostgreSQL), a
 * compare-and-set judged from the same version by another batch or node would pass without seeing
 * the success, and a locking statement would read the log as of its own start; there the row is
 * updated, as any save does. Returns the saved rows' new version (null where they keep theirs) and
 * the heartbeats not saved, whose pings are not logged.
 */
export async function saveRoutine(db: Db, judged: readonly JudgedFrom[], pings: readonly PingRow[]): Promise<{ version: string | null; lost: Set<string> }> {
  const [sql, name] = db.kind === 'pglite' ? [LOG_ROUTINE_SQL, 'heartbeat_log_routine'] : [SAVE_ROUTINE_SQL, 'heartbeat_save_routine'];
  const [row] = await db.query<{ version: string | null; lost: string[] }>(sql, [...arraysOf(ROUTINE_OF, judged), ...arraysOf(ROUTINE_PINGS, pings)], { prepared: name });
  return { version: row!.version, lost: new Set(row!.lost) };
}

/**
 * The latest counted success logged after the row's own last ping, over `heartbeats h`: a routine
 * success the row does not hold (`saveRoutine`), or null. Every statement that reads a heartbeat's
 * state selects it, and `withLoggedSuccess` folds it in. The log's index on (target, time) finds it.
 */
export const LOGGED_SUCCESS_SQL = `(SELECT max(p.received_at) FROM heartbeat_pings p
  WHERE p.target_id = h.target_id AND p.received_at > coalesce(h.last_ping_at, '-infinity') AND p.signal = 'success' AND p.counted)`;

type Foldable = Pick<HeartbeatRow, 'last_ping_at' | 'last_success_at' | 'window_from'> & { logged_success: Date | null };

/** A row with its logged routine success folded in: that success is its last ping, its last success and the silence clock's start. */
export function withLoggedSuccess<R extends Foldable>(row: R): R {
  const at = row.logged_success;
  if (at === null || (row.last_ping_at !== null && at <= row.last_ping_at)) return row;
  // A success is a ping, so the row's last success is no later than its last ping; a resume can put
  // the silence clock's start after both.
  return { ...row, last_ping_at: at, last_success_at: at, window_from: row.window_from !== null && row.window_from > at ? row.window_from : at };
}

/**
 * How far ahead a stored deadline may lie: the sweep rewrites each running heartbeat at least this
 * often, folding its logged routine successes into the row well before the ping log's 30 days
 * (PING_LOG_DAYS) would take them, whatever its period + grace (up to 60 days).
 */
export const FOLD_WITHIN_MS = 7 * 86_400_000;

/** A deadline as stored at `now`: the real one, or the fold's if that comes first. */
export const storedDueAt = (due: number | null, now: number): number | null => (due === null ? null : Math.min(due, now + FOLD_WITHIN_MS));

/** Attaches each run's output (a POST body) to its ping. */
export async function saveOutputs(tx: Executor, outputs: ReadonlyArray<{ pingId: string; output: string }>): Promise<void> {
  if (outputs.length === 0) return;
  await tx.query(
    `UPDATE heartbeat_pings p SET output = r.output FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, output text) WHERE p.id = r.id`,
    [JSON.stringify(outputs.map((o) => ({ id: o.pingId, output: o.output })))]);
}

/**
 * Whether `tokenHash` names a ping URL at `now`: a heartbeat's current one, or a replaced one still
 * in its 24 hours (the ingest's own matching rule, read without a lock).
 */
export async function pingUrlExists(db: Executor, tokenHash: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM heartbeats h
      WHERE h.token_hash = $1 OR (h.previous_token_hash = $1 AND h.previous_expires_at > $2)
         OR (${HAS_RETIRED_SQL} AND h.retired_token_hashes && ARRAY[$1]::text[] AND EXISTS (
               SELECT 1 FROM unnest(h.retired_token_hashes, h.retired_expires_at) AS r(hash, expires_at) WHERE r.hash = $1 AND r.expires_at > $2))
      LIMIT 1`, [tokenHash, now]);
  return rows.length > 0;
}
