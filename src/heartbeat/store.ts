// The heartbeat row as the ingest, the sweep and the record read it, and the statements that save
// a batch of changed states and pings at once (one statement each, whatever the batch size).
import type { Executor } from '../db/db.js';
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

const isoOrNull = (at: number | null): string | null => (at === null ? null : new Date(at).toISOString());

/** Saves each heartbeat's new state in one statement. */
export async function saveStates(tx: Executor, changes: readonly StateChange[]): Promise<void> {
  if (changes.length === 0) return;
  const rows = changes.map(({ targetId, state: s, dueAt, lastFailPingId, previousLastUsedAt }) => ({
    target_id: targetId, status: s.status, first_ping_at: isoOrNull(s.firstPingAt), last_ping_at: isoOrNull(s.lastPingAt),
    last_success_at: isoOrNull(s.lastSuccessAt), last_start_at: isoOrNull(s.lastStartAt), run_started_at: isoOrNull(s.runStartedAt),
    last_fail_at: isoOrNull(s.lastFailAt), last_exit_code: s.lastExitCode, window_from: isoOrNull(s.windowFrom), due_at: isoOrNull(dueAt),
    last_fail_ping_id: lastFailPingId, previous_last_used_at: isoOrNull(previousLastUsedAt),
  }));
  await tx.query(
    `UPDATE heartbeats h SET status = r.status, first_ping_at = r.first_ping_at, last_ping_at = r.last_ping_at,
       last_success_at = r.last_success_at, last_start_at = r.last_start_at, run_started_at = r.run_started_at,
       last_fail_at = r.last_fail_at, last_exit_code = r.last_exit_code, window_from = r.window_from, due_at = r.due_at,
       last_fail_ping_id = r.last_fail_ping_id, previous_last_used_at = r.previous_last_used_at
     FROM jsonb_to_recordset($1::jsonb) AS r(target_id uuid, status text, first_ping_at timestamptz, last_ping_at timestamptz,
       last_success_at timestamptz, last_start_at timestamptz, run_started_at timestamptz, last_fail_at timestamptz,
       last_exit_code smallint, window_from timestamptz, due_at timestamptz, last_fail_ping_id uuid, previous_last_used_at timestamptz)
     WHERE h.target_id = r.target_id`,
    [JSON.stringify(rows)], { prepared: 'heartbeat_save_states' });
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

export async function insertPings(tx: Executor, pings: readonly PingRow[]): Promise<void> {
  if (pings.length === 0) return;
  const rows = pings.map((p) => ({
    id: p.id, target_id: p.targetId, received_at: new Date(p.at).toISOString(), signal: p.signal, exit_code: p.exitCode, run_ms: p.runMs, counted: p.counted,
  }));
  await tx.query(
    `INSERT INTO heartbeat_pings (id, target_id, received_at, signal, exit_code, run_ms, counted)
     SELECT id, target_id, received_at, signal, exit_code, run_ms, counted
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, target_id uuid, received_at timestamptz, signal text, exit_code smallint, run_ms integer, counted boolean)`,
    [JSON.stringify(rows)], { prepared: 'heartbeat_insert_pings' });
}

/** Attaches each run's output (a POST body) to its ping. */
export async function saveOutputs(tx: Executor, outputs: ReadonlyArray<{ pingId: string; output: string }>): Promise<void> {
  if (outputs.length === 0) return;
  await tx.query(
    `UPDATE heartbeat_pings p SET output = r.output FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, output text) WHERE p.id = r.id`,
    [JSON.stringify(outputs.map((o) => ({ id: o.pingId, output: o.output })))]);
}
