// Manual monitors (monitoring-api.md, "Manual monitor rules", "Manual monitor" transitions): a state
// set by hand. A set that changes status or note writes a result at once (if the monitor runs) and an
// audit row; the same status and note again writes nothing. The scheduler restates the state once a minute.
import type { Db, Executor } from '../db/db.js';
import type { WriteSource } from '../http/write-source.js';
import { NO_PROBE_REGION, type ResultWriter } from '../results/index.js';
import { writeAudit } from '../shared/audit.js';
import type { Actor, Clock, OrgRef } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { getTargetRowInOrg } from '../targets/service.js';
import { runsNow, stampTargetWrite, type TargetRow } from '../targets/store.js';
import type { ManualStateT, ManualStatus, PutManualState } from './schema.js';

export interface ManualCtx { db: Db; clock: Clock; actor: Actor; org: OrgRef; userId: string; results: ResultWriter; writeSource: WriteSource }

interface StateRow { status: ManualStatus; note: string | null; set_at: Date; set_by: string | null }

const notConfigured = (): AppError => new AppError(404, 'MANUAL_NOT_CONFIGURED', 'this monitor is not a manual monitor');

async function manualTarget(db: Executor, orgId: string, id: string, lock?: 'update'): Promise<TargetRow> {
  const row = await getTargetRowInOrg(db, orgId, id, lock);
  if (row.kind !== 'manual') throw notConfigured();
  return row;
}

/** "Either state route on a non-manual monitor is 404": asked before a PUT's body is validated, so a bad body on another kind answers that too. */
export async function refuseUnlessManual(ctx: Pick<ManualCtx, 'db' | 'org'>, id: string): Promise<void> {
  await manualTarget(ctx.db, ctx.org.id, id);
}

async function stateRow(db: Executor, target: TargetRow): Promise<StateRow> {
  const [row] = await db.query<StateRow>('SELECT status, note, set_at, set_by FROM manual_states WHERE target_id = $1', [target.id]);
  return row ?? { status: 'up', note: null, set_at: target.created_at, set_by: null };
}

const toState = (row: StateRow): ManualStateT => ({ status: row.status, note: row.note, set_at: row.set_at.toISOString(), set_by: row.set_by });

/** The state of every manual monitor in `ids` (the scheduler restates them once a minute). */
export async function manualStates(db: Executor, ids: readonly string[]): Promise<Map<string, StateRow>> {
  const rows = await db.query<StateRow & { target_id: string }>(
    'SELECT target_id, status, note, set_at, set_by FROM manual_states WHERE target_id = ANY($1::uuid[])', [ids]);
  return new Map(rows.map((r) => [r.target_id, r]));
}

/** The result a state stands for: its status, with the note as the reason when not up. */
export function resultOfState(state: Pick<StateRow, 'status' | 'note'>): { status: ManualStatus; duration_ms: number; error: string | null } {
  return { status: state.status, duration_ms: 0, error: state.status === 'up' ? null : (state.note ?? `set ${state.status} by hand`) };
}

/**
 * Restates a running manual monitor's state as a result (the scheduler, once a minute). The row is
 * share-locked before the state is read, and the result commits with that read: a set, which holds
 * the row for update until it commits, is either read here or written after, never overtaken by
 * the state it replaced. Paused, held or deleted since hand-out: nothing is written (false).
 */
export async function restateManualState(db: Db, results: ResultWriter, clock: Clock, target: { id: string; orgId: string }): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [live] = await tx.query(
      `SELECT 1 FROM targets WHERE id = $1 AND kind = 'manual' AND enabled AND held_at IS NULL FOR SHARE`, [target.id]);
    if (!live) return false;
    // A statement of its own, after the lock: it sees a set that committed while this one waited.
    const state = (await manualStates(tx, [target.id])).get(target.id) ?? { status: 'up', note: null };
    // Dated after the lock too: results then follow the order in which sets and restatements commit.
    const record = { ...resultOfState(state), targetId: target.id, orgId: target.orgId, region: NO_PROBE_REGION, checkedAt: clock.now() };
    await results.writeNow(tx, record);
    return true;
  });
}

export async function getManualState(ctx: ManualCtx, id: string): Promise<ManualStateT> {
  return toState(await stateRow(ctx.db, await manualTarget(ctx.db, ctx.org.id, id)));
}

/** A note is trimmed; an empty one is no note. */
const normaliseNote = (note: string | null | undefined): string | null => (note?.trim() ? note.trim() : null);

export async function putManualState(ctx: ManualCtx, id: string, input: PutManualState): Promise<ManualStateT> {
  const note = normaliseNote(input.note);
  const state = await ctx.db.transaction(async (tx) => {
    const target = await manualTarget(tx, ctx.org.id, id, 'update');
    const current = await stateRow(tx, target);
    if (current.status === input.status && current.note === note) return current;
    const now = ctx.clock.now();
    await tx.query(
      `INSERT INTO manual_states (target_id, org_id, status, note, set_at, set_by) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (target_id) DO UPDATE SET status = excluded.status, note = excluded.note, set_at = excluded.set_at, set_by = excluded.set_by`,
      [id, ctx.org.id, input.status, note, now, ctx.userId]);
    await stampTargetWrite(tx, ctx.org.id, id, ctx.writeSource);
    await writeAudit(tx, ctx.actor, {
      action: 'target.state_set', orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'target', entityId: id,
      details: { status: input.status, note, previous_status: current.status, write_source: ctx.writeSource },
    });
    const state: StateRow = { status: input.status, note, set_at: now, set_by: ctx.userId };
    // A paused or held monitor keeps its state unreported: the scheduler restates it once it runs again.
    if (runsNow(target)) {
      await ctx.results.writeNow(tx, { ...resultOfState(state), targetId: id, orgId: ctx.org.id, region: NO_PROBE_REGION, checkedAt: now });
    }
    return state;
  });
  return toState(state);
}
