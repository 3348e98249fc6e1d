// Holds on the monitors pool (service-api.md, "Holds"): when the plan's `max_targets`, or
// `max_flow_checks` for flow monitors, is below what the account has, the oldest monitors keep the
// slots and the newest are held: not probed, no alerting (the scheduler, check-now, the ping
// ingest and manual states all read `held_at`). Each cap is judged on its own; held rows still
// count against the cap. When the cap covers the pool again they are released, settings untouched
// (`enabled` is never written, nor `updated_at`: a hold is no edit). `hold_changed_at` moves so every
// node's scheduler sees the change at its next poll; a heartbeat released gets a full period + grace,
// as on a resume. Registered with the plans domain (plans/holds.ts), which runs it on plan and
// override changes, after deletions, at startup and daily.
import type { Executor } from '../db/db.js';
import { heartbeatsAfterUpdate } from '../heartbeat/index.js';
import { registerHoldReconciler, type HoldCounts, type HoldReconciler } from '../plans/holds.js';
import type { EffectivePlan } from '../plans/service.js';
import { writeAuditMany } from '../shared/audit.js';
import type { Actor } from '../shared/context.js';
import { lockAccount, type TargetRow } from './store.js';

const HOLDS: Actor = { type: 'system', job: 'plan-holds' };

/** A pool member as the rule sees it, oldest first. */
export interface PoolMember { id: string; kind: string }

/**
 * The ids the caps leave without a slot: beyond `max_targets` in the whole pool, and beyond
 * `max_flow_checks` among flows; `members` oldest first, a null cap unlimited.
 */
export function overCaps(members: readonly PoolMember[], caps: Pick<EffectivePlan['caps'], 'max_targets' | 'max_flow_checks'>): Set<string> {
  const held = new Set<string>();
  const beyond = (pool: readonly PoolMember[], cap: number | null): void => {
    if (cap !== null) for (const m of pool.slice(cap)) held.add(m.id);
  };
  beyond(members, caps.max_targets);
  beyond(members.filter((m) => m.kind === 'flow'), caps.max_flow_checks);
  return held;
}

/** The monitors pool's reconciler: holds and releases the account's monitors as its plan now allows. */
export const reconcileMonitorHolds: HoldReconciler = async (tx, accountId, plan, deps) => {
  // The pool's quota lock: creates, deletions and other reconciles of the account wait their turn.
  await lockAccount(tx, accountId);
  if (await settled(tx, accountId, plan)) return { held: 0, released: 0 };
  // Locked in id order, as every writer of several monitors locks them; judged oldest first.
  const members = await tx.query<PoolMember & { held_at: Date | null; created_at: Date }>(
    'SELECT id, kind, held_at, created_at FROM targets WHERE account_id = $1 ORDER BY id FOR NO KEY UPDATE', [accountId]);
  members.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1));
  const held = overCaps(members, plan.caps);
  const moving = members.filter((m) => (m.held_at !== null) !== held.has(m.id));
  if (!moving.length) return { held: 0, released: 0 };
  const now = deps.clock.now();
  const updated = await tx.query<TargetRow>(
    `UPDATE targets SET held_at = CASE WHEN id = ANY($2::uuid[]) THEN $3::timestamptz END, hold_changed_at = $3
      WHERE id = ANY($1::uuid[]) RETURNING *`,
    [moving.map((m) => m.id), [...held], now]);
  await writeAuditMany(tx, HOLDS, updated.map((row) => ({
    action: row.held_at ? 'target.plan_hold' : 'target.plan_release', orgId: row.org_id, accountId,
    entityType: 'target', entityId: row.id, details: { name: row.name, kind: row.kind },
  })));
  const before = new Map(moving.map((m) => [m.id, m.held_at]));
  await heartbeatsAfterUpdate(tx, updated.map((row) => ({ ...row, held_at: before.get(row.id)! })), updated, now, deps.results);
  return countsOf(updated);
};

/** Nothing held and every cap covering the pool: the common case, answered by one count. */
async function settled(tx: Executor, accountId: string, plan: EffectivePlan): Promise<boolean> {
  const [pool] = await tx.query<{ total: number; flows: number; held: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE kind = 'flow')::int AS flows, count(*) FILTER (WHERE held_at IS NOT NULL)::int AS held
       FROM targets WHERE account_id = $1`, [accountId]);
  const within = (n: number, cap: number | null): boolean => cap === null || n <= cap;
  return pool!.held === 0 && within(pool!.total, plan.caps.max_targets) && within(pool!.flows, plan.caps.max_flow_checks);
}

function countsOf(rows: readonly TargetRow[]): HoldCounts {
  const held = rows.filter((r) => r.held_at !== null).length;
  return { held, released: rows.length - held };
}

registerHoldReconciler('monitors', reconcileMonitorHolds);
