// The heartbeat record, URL rotation, and what a monitor change does to a heartbeat
// (monitoring-api.md, "Heartbeat record", "Heartbeat ping endpoint" rules 5-6, "Heartbeat monitor").
import type { Db, Executor } from '../db/db.js';
import type { WriteSource } from '../http/write-source.js';
import type { CheckResultRecord, ResultWriter } from '../results/index.js';
import { writeAudit } from '../shared/audit.js';
import type { Actor, Clock, OrgRef } from '../shared/context.js';
import { AppError, notFound } from '../shared/errors.js';
import { randomToken } from '../shared/ids.js';
import type { Sealer } from '../shared/seal.js';
import { getTargetRow, runsNow, stampTargetWrite, type TargetRow } from '../targets/store.js';
import { cadenceOf, CADENCE_WINDOW_MS } from './cadence.js';
import { PING_TOKEN_BYTES, pingTokenHash, pingUrl } from './ping-tokens.js';
import type { HeartbeatRecordT, Rotate } from './schema.js';
import { changeOf, LOGGED_SUCCESS_SQL, resultOf, saveStates, storedDueAt, timingOf, withLoggedSuccess, type HeartbeatRow, type StateChange } from './store.js';
import { dueAt, resume } from './verdict.js';

/** How long a replaced ping URL keeps working. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface HeartbeatCtx { db: Db; clock: Clock; actor: Actor; org: OrgRef; sealer: Sealer; publicBaseUrl: string; writeSource: WriteSource }

const notHeartbeat = (): AppError => new AppError(404, 'NOT_FOUND', 'this monitor is not a heartbeat monitor');

async function heartbeatTarget(db: Executor, orgId: string, id: string, lock?: 'update'): Promise<TargetRow> {
  const target = await getTargetRow(db, orgId, id, lock);
  if (!target) throw notFound('target');
  if (target.kind !== 'heartbeat') throw notHeartbeat();
  return target;
}

/** A heartbeat's row with what `withLoggedSuccess` folds in. */
type StoredHeartbeat = HeartbeatRow & { logged_success: Date | null };

async function heartbeatRow(db: Executor, targetId: string, lock?: 'update'): Promise<StoredHeartbeat> {
  const [row] = await db.query<StoredHeartbeat>(
    `SELECT h.*, ${LOGGED_SUCCESS_SQL} AS logged_success FROM heartbeats h WHERE h.target_id = $1${lock ? ' FOR UPDATE' : ''}`, [targetId]);
  if (!row) throw notHeartbeat();
  return row;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

async function toRecord(db: Executor, ctx: HeartbeatCtx, target: TargetRow, stored: StoredHeartbeat): Promise<HeartbeatRecordT> {
  const row = withLoggedSuccess(stored);
  const now = ctx.clock.now();
  const token = ctx.sealer.open(row.sealed_token);
  if (token === null) throw new AppError(503, 'SERVICE_UNAVAILABLE', 'the ping URL was sealed under a key that is no longer configured; rotate it');
  const [successes, [failure]] = await Promise.all([
    db.query<{ received_at: Date }>(
      `SELECT received_at FROM heartbeat_pings WHERE target_id = $1 AND signal = 'success' AND counted AND received_at > $2 ORDER BY received_at`,
      [row.target_id, new Date(now.getTime() - CADENCE_WINDOW_MS)]),
    row.last_fail_ping_id ? db.query<{ output: string | null }>('SELECT output FROM heartbeat_pings WHERE id = $1', [row.last_fail_ping_id]) : Promise.resolve([]),
  ]);
  const timing = timingOf(target.check_spec);
  const cadence = cadenceOf(successes.map((s) => s.received_at.getTime()), timing);
  const overlap = row.previous_token_hash !== null && row.previous_expires_at !== null && row.previous_expires_at > now;
  return {
    ping_url: pingUrl(ctx.publicBaseUrl, token),
    pending: row.status === 'pending',
    first_ping_at: iso(row.first_ping_at),
    created_at: row.created_at.toISOString(),
    last_ping_at: iso(row.last_ping_at),
    last_start_at: iso(row.last_start_at),
    last_fail_at: iso(row.last_fail_at),
    last_exit_code: row.last_exit_code,
    last_failure_output: failure?.output ?? null,
    declared_period_secs: timing.period / 1000,
    observed_period_secs: cadence.observedPeriodMs === null ? null : Math.round(cadence.observedPeriodMs / 1000),
    ...(cadence.advice && { cadence_advice: cadence.advice }),
    ...(overlap && { previous_url_expires_at: row.previous_expires_at!.toISOString(), previous_url_last_used_at: iso(row.previous_last_used_at) }),
    rotated_at: iso(row.rotated_at),
  };
}

export async function getHeartbeatRecord(ctx: HeartbeatCtx, id: string): Promise<HeartbeatRecordT> {
  const target = await heartbeatTarget(ctx.db, ctx.org.id, id);
  return toRecord(ctx.db, ctx, target, await heartbeatRow(ctx.db, id));
}

/**
 * A new ping URL. The replaced one keeps working for 24 hours, and so does any replaced by an
 * earlier rotation whose 24 hours still run (the record shows the latest); with
 * `revoke_previous_immediately` every replaced URL stops at this commit. State, history and the
 * silence clock are left alone.
 */
export async function rotateHeartbeat(ctx: HeartbeatCtx, id: string, input: Rotate): Promise<HeartbeatRecordT> {
  return ctx.db.transaction(async (tx) => {
    const target = await heartbeatTarget(tx, ctx.org.id, id, 'update');
    const current = await heartbeatRow(tx, id, 'update');
    const token = randomToken(PING_TOKEN_BYTES);
    const now = ctx.clock.now();
    const revoke = input.revoke_previous_immediately === true;
    const retired = revoke ? [] : stillWorking(current, now);
    const [row] = await tx.query<StoredHeartbeat>(
      `UPDATE heartbeats h SET token_hash = $2, sealed_token = $3, previous_token_hash = $4, previous_expires_at = $5,
         previous_last_used_at = NULL, rotated_at = $6, retired_token_hashes = $7::text[], retired_expires_at = $8::timestamptz[]
       WHERE target_id = $1 RETURNING h.*, ${LOGGED_SUCCESS_SQL} AS logged_success`,
      [id, pingTokenHash(token), ctx.sealer.seal(token), revoke ? null : current.token_hash, revoke ? null : new Date(now.getTime() + ROTATION_OVERLAP_MS), now,
        retired.map((r) => r.hash), retired.map((r) => r.expiresAt.toISOString())]);
    await stampTargetWrite(tx, ctx.org.id, id, ctx.writeSource);
    await writeAudit(tx, ctx.actor, {
      action: 'target.heartbeat_rotated', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'target', entityId: id,
      details: { revoke_previous_immediately: revoke, write_source: ctx.writeSource },
    });
    return toRecord(tx, ctx, target, row!);
  });
}

/** The replaced URLs of `row` whose 24 hours still run at `now`, older first: what a new rotation keeps. */
function stillWorking(row: HeartbeatRow, now: Date): Array<{ hash: string; expiresAt: Date }> {
  const replaced = row.retired_token_hashes.map((hash, i) => ({ hash, expiresAt: row.retired_expires_at[i]! }));
  if (row.previous_token_hash !== null && row.previous_expires_at !== null) replaced.push({ hash: row.previous_token_hash, expiresAt: row.previous_expires_at });
  return replaced.filter((r) => r.expiresAt > now);
}

/**
 * Ends every rotation overlap now; nothing to end is not an error. Replaced URLs past their 24 hours
 * are cleared too, but only ending one that still worked is a write (restamped and audited).
 */
export async function revokePreviousUrl(ctx: HeartbeatCtx, id: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    await heartbeatTarget(tx, ctx.org.id, id, 'update');
    const current = await heartbeatRow(tx, id, 'update');
    await tx.query(
      `UPDATE heartbeats SET previous_token_hash = NULL, previous_expires_at = NULL, previous_last_used_at = NULL,
         retired_token_hashes = '{}', retired_expires_at = '{}'
        WHERE target_id = $1 AND (previous_token_hash IS NOT NULL OR cardinality(retired_token_hashes) > 0)`, [id]);
    if (stillWorking(current, ctx.clock.now()).length > 0) {
      await stampTargetWrite(tx, ctx.org.id, id, ctx.writeSource);
      await writeAudit(tx, ctx.actor, {
        action: 'target.heartbeat_previous_revoked', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'target', entityId: id,
        details: { write_source: ctx.writeSource },
      });
    }
  });
}

/**
 * Runs in the transaction that changed monitors (locked, `before` and `after` by position): a
 * heartbeat that runs again gets a full period + grace from now (a down one comes back up, with a
 * result); one that stops running is no longer due; a new period, grace or max_runtime moves its
 * next deadline.
 */
export async function heartbeatsAfterUpdate(tx: Executor, before: readonly TargetRow[], after: readonly TargetRow[], now: Date, results: ResultWriter): Promise<void> {
  const prior = new Map(before.map((row) => [row.id, row]));
  const touched = after.filter((row) => {
    const was = prior.get(row.id);
    return row.kind === 'heartbeat' && was && (runsNow(was) !== runsNow(row) || JSON.stringify(was.check_spec) !== JSON.stringify(row.check_spec));
  });
  if (touched.length === 0) return;
  const byId = new Map(touched.map((row) => [row.id, row]));
  const rows = await tx.query<StoredHeartbeat>(
    `SELECT h.*, ${LOGGED_SUCCESS_SQL} AS logged_success FROM heartbeats h WHERE h.target_id = ANY($1::uuid[]) ORDER BY h.target_id FOR UPDATE`, [[...byId.keys()]]);
  const changes: StateChange[] = [];
  const written: CheckResultRecord[] = [];
  for (const row of rows.map(withLoggedSuccess)) {
    const target = byId.get(row.target_id)!;
    const change = changeOf(row);
    if (runsNow(target) && !runsNow(prior.get(target.id)!)) {
      const resumed = resume(change.state, now.getTime());
      change.state = resumed.state;
      if (resumed.result) written.push(resultOf(row, resumed.result));
    }
    change.dueAt = runsNow(target) ? storedDueAt(dueAt(change.state, timingOf(target.check_spec)), now.getTime()) : null;
    changes.push(change);
  }
  await saveStates(tx, changes);
  await results.writeNow(tx, ...written);
}
