// The rules of maintenance windows (monitoring-api.md, "Maintenance window" transitions,
// "Maintenance and incident narration"): the time range, components that are the org's monitors,
// the account's `max_maintenance_windows` (windows not yet ended), edits only before the end,
// cancel as history, and at most 50 updates.
import type { Db, Executor } from '../db/db.js';
import type { WriteSource } from '../http/write-source.js';
import { lockQuotaPool } from '../plans/quota-lock.js';
import type { PlanService } from '../plans/service.js';
import { writeAudit } from '../shared/audit.js';
import { announceMaintenanceUpdate } from './announcements.js';
import type { Actor, Clock, OrgRef } from '../shared/context.js';
import { AppError, notFound, quotaExceeded } from '../shared/errors.js';
import { instantOf } from '../shared/instant.js';
import { requiredText } from '../shared/text.js';
import { newId } from '../shared/ids.js';
import { checkOwnMonitorIds } from '../targets/index.js';
import {
  MAINTENANCE_UPDATES_MAX, type CreateMaintenance, type MaintenanceFilter, type MaintenanceStatus, type MaintenanceWindowT,
  type PatchMaintenance,
} from './schema.js';
import {
  cancelWindowRow, countUpdates, getWindowRow, insertUpdate, insertWindow, listWindowRows, replaceComponents, touchWindow,
  updateWindowRow, windowDetails, type UpdateRow, type WindowRow, type WindowValues,
} from './store.js';

export interface MaintenanceCtx {
  db: Db;
  clock: Clock;
  actor: Actor;
  org: OrgRef;
  userId: string;
  plans: PlanService;
  writeSource: WriteSource;
}

export function statusOf(row: Pick<WindowRow, 'starts_at' | 'ends_at' | 'deleted_at'>, now: Date): MaintenanceStatus {
  if (row.deleted_at) return 'cancelled';
  if (now < row.starts_at) return 'upcoming';
  return now < row.ends_at ? 'active' : 'ended';
}

function toWindow(row: WindowRow, components: string[], updates: UpdateRow[], now: Date): MaintenanceWindowT {
  return {
    id: row.id, title: row.title, description: row.description, starts_at: row.starts_at.toISOString(), ends_at: row.ends_at.toISOString(),
    components, suppress_alerts: row.suppress_alerts, status: statusOf(row, now),
    updates: updates.map((u) => ({ id: u.id, message: u.message, created_at: u.created_at.toISOString() })),
    deleted_at: row.deleted_at?.toISOString() ?? null, deleted_by: row.deleted_by, write_source: row.write_source,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

async function present(db: Executor, rows: WindowRow[], now: Date): Promise<MaintenanceWindowT[]> {
  const { components, updates } = await windowDetails(db, rows.map((r) => r.id));
  return rows.map((r) => toWindow(r, components.get(r.id)!, updates.get(r.id)!, now));
}

const invalid = (field: string, message: string): AppError => new AppError(400, 'VALIDATION_FAILED', `${field}: ${message}`, { field });

const trimmedTitle = (title: string): string => requiredText(title, 'title');

const descriptionOf = (description: string | null | undefined): string | null => (description?.trim() ? description.trim() : null);

function checkRange(startsAt: Date, endsAt: Date, now: Date): void {
  if (endsAt <= startsAt) throw invalid('ends_at', 'must be after starts_at');
  if (endsAt <= now) throw invalid('ends_at', 'must be in the future');
}

async function lockedWindow(tx: Executor, ctx: MaintenanceCtx, id: string): Promise<WindowRow> {
  const row = await getWindowRow(tx, ctx.org.id, id, 'update');
  if (!row) throw notFound('maintenance window');
  return row;
}

const cancelled = (): AppError => new AppError(422, 'MAINTENANCE_CANCELLED', 'this maintenance window was cancelled');
const ended = (): AppError => new AppError(409, 'CONFLICT', 'this maintenance window has ended');

export async function listWindows(ctx: MaintenanceCtx, filter: MaintenanceFilter, page: { limit: number; offset: number }) {
  const now = ctx.clock.now();
  const { rows, total } = await listWindowRows(ctx.db, ctx.org.id, filter, now, page);
  return { maintenance_windows: await present(ctx.db, rows, now), total, limit: page.limit, offset: page.offset };
}

export async function getWindowInOrg(ctx: MaintenanceCtx, id: string): Promise<MaintenanceWindowT> {
  const row = await getWindowRow(ctx.db, ctx.org.id, id);
  if (!row) throw notFound('maintenance window');
  return (await present(ctx.db, [row], ctx.clock.now()))[0]!;
}

export async function createWindow(ctx: MaintenanceCtx, input: CreateMaintenance): Promise<MaintenanceWindowT> {
  const now = ctx.clock.now();
  const values: WindowValues = {
    title: trimmedTitle(input.title), description: descriptionOf(input.description),
    starts_at: instantOf(input.starts_at, 'starts_at'), ends_at: instantOf(input.ends_at, 'ends_at'),
    suppress_alerts: input.suppress_alerts ?? true, write_source: ctx.writeSource,
  };
  checkRange(values.starts_at, values.ends_at, now);
  return ctx.db.transaction(async (tx) => {
    const components = await checkOwnMonitorIds(tx, ctx.org.id, input.components ?? [], 'components');
    await lockQuotaPool(tx, 'maintenance', ctx.org.accountId);
    const limit = (await ctx.plans.load(tx, ctx.org.accountId)).caps.max_maintenance_windows;
    const row = await insertWindow(tx, { id: newId(), orgId: ctx.org.id, accountId: ctx.org.accountId, limit, now, ...values });
    if (!row) throw quotaExceeded('max_maintenance_windows', limit);
    await replaceComponents(tx, row.id, components);
    await audit(tx, ctx, 'maintenance.created', row.id, { title: row.title, starts_at: row.starts_at, ends_at: row.ends_at, components: components.length });
    return toWindow(row, components, [], now);
  });
}

/**
 * Edits an upcoming or running window. `ends_at` must stay in the future, except that on a running
 * window one at or before now ends it at the server's clock.
 */
export async function patchWindow(ctx: MaintenanceCtx, id: string, input: PatchMaintenance): Promise<MaintenanceWindowT> {
  const now = ctx.clock.now();
  return ctx.db.transaction(async (tx) => {
    const current = await lockedWindow(tx, ctx, id);
    const status = statusOf(current, now);
    if (status === 'cancelled') throw cancelled();
    if (status === 'ended') throw ended();
    const startsAt = input.starts_at === undefined ? current.starts_at : instantOf(input.starts_at, 'starts_at');
    let endsAt = input.ends_at === undefined ? current.ends_at : instantOf(input.ends_at, 'ends_at');
    const endingNow = status === 'active' && input.ends_at !== undefined && endsAt <= now;
    if (endingNow) {
      if (input.starts_at !== undefined) throw invalid('starts_at', 'cannot move while ending a running window');
      endsAt = now;
    } else {
      checkRange(startsAt, endsAt, now);
      // A PATCH keeps the state: a running window's start stays past, an upcoming one's to come.
      if (status === 'active' && startsAt > now) throw invalid('starts_at', 'a running window cannot start in the future; end it and plan another');
      if (status === 'upcoming' && startsAt <= now) throw invalid('starts_at', 'an upcoming window cannot start in the past; schedule a window that starts now instead');
    }
    const row = await updateWindowRow(tx, ctx.org.id, id, {
      title: input.title === undefined ? current.title : trimmedTitle(input.title),
      description: input.description === undefined ? current.description : descriptionOf(input.description),
      starts_at: startsAt, ends_at: endsAt,
      suppress_alerts: input.suppress_alerts ?? current.suppress_alerts,
      write_source: ctx.writeSource,
    });
    if (input.components !== undefined) await replaceComponents(tx, id, await checkOwnMonitorIds(tx, ctx.org.id, input.components, 'components'));
    await audit(tx, ctx, endingNow ? 'maintenance.ended' : 'maintenance.updated', id, { fields: Object.keys(input).sort() });
    return (await present(tx, [row], now))[0]!;
  });
}

/** Cancels a window that has not ended; it stays as history with `deleted_at` and `deleted_by`. */
export async function cancelWindow(ctx: MaintenanceCtx, id: string): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.transaction(async (tx) => {
    const current = await lockedWindow(tx, ctx, id);
    const status = statusOf(current, now);
    if (status === 'cancelled') throw cancelled();
    if (status === 'ended') throw ended();
    await cancelWindowRow(tx, ctx.org.id, id, { now, by: ctx.userId, writeSource: ctx.writeSource });
    await audit(tx, ctx, 'maintenance.cancelled', id, { title: current.title, was: status });
  });
}

/** Posts an update to an upcoming, running or ended window; at most 50 per window. */
export async function postUpdate(ctx: MaintenanceCtx, id: string, message: string): Promise<MaintenanceWindowT> {
  const now = ctx.clock.now();
  return ctx.db.transaction(async (tx) => {
    // The id first: a foreign or unknown window is 404, and a cancelled one 422, whatever the message.
    const current = await lockedWindow(tx, ctx, id);
    if (current.deleted_at) throw cancelled();
    const text = requiredText(message, 'message');
    if (await countUpdates(tx, id) >= MAINTENANCE_UPDATES_MAX) {
      throw new AppError(422, 'MAINTENANCE_UPDATE_LIMIT', `a maintenance window takes at most ${MAINTENANCE_UPDATES_MAX} updates`);
    }
    const updateId = newId();
    await insertUpdate(tx, { id: updateId, windowId: id, message: text, by: ctx.userId, now });
    await touchWindow(tx, id, ctx.writeSource);
    await audit(tx, ctx, 'maintenance.update_posted', id, { length: text.length });
    const [window] = await present(tx, [(await getWindowRow(tx, ctx.org.id, id))!], now);
    await announceMaintenanceUpdate(tx, { orgId: ctx.org.id, windowId: id, targetIds: window!.components, updateId, message: text, at: now });
    return window!;
  });
}

async function audit(tx: Executor, ctx: MaintenanceCtx, action: string, id: string, details: Record<string, unknown>): Promise<void> {
  await writeAudit(tx, ctx.actor, {
    action, orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'maintenance_window', entityId: id,
    details: { ...details, write_source: ctx.writeSource },
  });
}
