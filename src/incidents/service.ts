// Incidents read and acted on by people: list, detail, acknowledge, resolve. Every change is
// audited with the acting user or token and noted on the incident's timeline.
import type { Db, Executor } from '../db/db.js';
import { writeAudit } from '../shared/audit.js';
import { userIdOf, type Actor, type Clock, type OrgRef } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { requiredText } from '../shared/text.js';
import { isUuid, newId } from '../shared/ids.js';
import type { EffectivePlan } from '../plans/service.js';
import { enqueueNotifications } from '../notifications/outbox.js';
import { resultWindow } from '../results/index.js';
import { getTargetRowInOrg } from '../targets/service.js';
import { checkOwnMonitorIds } from '../targets/index.js';
import type { DeclareIncident, IncidentT, ListIncidents, PatchIncident, PostIncidentUpdate, TargetIncidents } from './schema.js';

export interface IncidentsCtx { db: Db; clock: Clock; actor: Actor; org: OrgRef }

interface IncidentRow {
  id: string; org_id: string; source: IncidentT['source']; status: IncidentT['status']; target_id: string | null;
  title: string | null; public_title: string | null; public_description: string | null; severity: string | null;
  impact: IncidentT['impact']; counts_as_downtime: boolean; cause: string | null;
  started_at: Date; ended_at: Date | null; recovering_since: Date | null; recovered: { from: string; until: string }[];
  acknowledged_at: Date | null; acknowledged_by: string | null; resolved_at: Date | null; resolved_by: string | null;
  created_at: Date; updated_at: Date;
}

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

export function toIncident(r: IncidentRow): IncidentT {
  return {
    id: r.id, source: r.source, status: r.status, target_id: r.target_id, title: r.title, public_title: r.public_title,
    public_description: r.public_description, severity: r.severity, impact: r.impact, counts_as_downtime: r.counts_as_downtime,
    cause: r.cause, started_at: r.started_at.toISOString(), ended_at: iso(r.ended_at), recovering_since: iso(r.recovering_since),
    recovered: r.recovered, acknowledged_at: iso(r.acknowledged_at), acknowledged_by: r.acknowledged_by,
    resolved_at: iso(r.resolved_at), resolved_by: r.resolved_by, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
  };
}

async function incidentRow(db: Executor, orgId: string, id: string, lock = false): Promise<IncidentRow> {
  const [row] = isUuid(id)
    ? await db.query<IncidentRow>(`SELECT * FROM incidents WHERE id = $1 AND org_id = $2${lock ? ' FOR UPDATE' : ''}`, [id, orgId])
    : [];
  if (!row) throw new AppError(404, 'NOT_FOUND', 'no such incident');
  return row;
}

export async function listIncidents(ctx: IncidentsCtx, query: ListIncidents) {
  const { limit = 50, offset = 0, status = 'all' } = query;
  const params: unknown[] = [ctx.org.id];
  let where = 'org_id = $1';
  if (status !== 'all') where += ` AND status = $${params.push(status)}`;
  if (query.target_id) {
    const at = params.push(query.target_id);
    where += ` AND (target_id = $${at} OR id IN (SELECT incident_id FROM incident_targets WHERE target_id = $${at}))`;
  }
  const [rows, [count]] = await Promise.all([
    ctx.db.query<IncidentRow>(`SELECT * FROM incidents WHERE ${where} ORDER BY started_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`, [...params, limit, offset]),
    ctx.db.query<{ total: number }>(`SELECT count(*)::int AS total FROM incidents WHERE ${where}`, params),
  ]);
  return { incidents: rows.map(toIncident), total: count!.total, limit, offset };
}

export async function getIncident(ctx: Pick<IncidentsCtx, 'db' | 'org'>, id: string, db: Executor = ctx.db) {
  const row = await incidentRow(db, ctx.org.id, id);
  const [timeline, updates, named] = await Promise.all([
    db.query<{ at: Date; kind: string; message: string | null; actor_user_id: string | null }>(
      'SELECT at, kind, message, actor_user_id FROM incident_events WHERE incident_id = $1 ORDER BY at, id', [id]),
    db.query<{ id: string; phase: string; message: string; created_by: string | null; created_at: Date }>(
      'SELECT id, phase, message, created_by, created_at FROM incident_updates WHERE incident_id = $1 ORDER BY created_at, id', [id]),
    db.query<{ target_id: string }>('SELECT target_id FROM incident_targets WHERE incident_id = $1 ORDER BY target_id', [id]),
  ]);
  return {
    ...toIncident(row),
    target_ids: row.target_id ? [row.target_id] : named.map((n) => n.target_id),
    timeline: timeline.map((e) => ({ ...e, at: e.at.toISOString() })),
    updates: updates.map((u) => ({ ...u, created_at: u.created_at.toISOString() })),
  };
}

/**
 * Locks what the engine locks, in its order (the monitor's streaks, then the incident), so a
 * person acting while results are being judged waits instead of deadlocking.
 */
async function lockIncident(tx: Executor, orgId: string, id: string): Promise<IncidentRow> {
  const seen = await incidentRow(tx, orgId, id);
  if (seen.target_id) await tx.query('SELECT 1 FROM alert_streaks WHERE target_id = $1 ORDER BY region FOR UPDATE', [seen.target_id]);
  return incidentRow(tx, orgId, id, true);
}

async function note(tx: Executor, ctx: IncidentsCtx, incidentId: string, kind: string, now: Date, details?: Record<string, unknown>): Promise<void> {
  await tx.query('INSERT INTO incident_events (id, incident_id, at, kind, actor_user_id) VALUES ($1, $2, $3, $4, $5)',
    [newId(), incidentId, now, kind, userIdOf(ctx.actor)]);
  await writeAudit(tx, ctx.actor, {
    action: `incident.${kind}`, orgId: ctx.org.id, accountId: ctx.org.accountId, entityType: 'incident', entityId: incidentId, ...(details && { details }),
  });
}

/** Stops reminders. Acknowledging twice changes nothing; a resolved incident is 409. */
export async function acknowledgeIncident(ctx: IncidentsCtx, id: string): Promise<IncidentT> {
  return ctx.db.transaction(async (tx) => {
    const row = await lockIncident(tx, ctx.org.id, id);
    if (row.status === 'resolved') throw new AppError(409, 'CONFLICT', 'the incident is resolved');
    if (row.acknowledged_at) return toIncident(row);
    const now = ctx.clock.now();
    const [updated] = await tx.query<IncidentRow>(
      'UPDATE incidents SET acknowledged_at = $2, acknowledged_by = $3, next_reminder_at = NULL, updated_at = $2 WHERE id = $1 RETURNING *', [id, now, userIdOf(ctx.actor)]);
    await note(tx, ctx, id, 'acknowledged', now);
    return toIncident(updated!);
  });
}

/**
 * Closes it now. A probed monitor that is still failing opens a new incident only after
 * `alert_confirmations` further failures: its failing streaks start again. A manual monitor's
 * streak stays, as its state does: restating that state reopens nothing until a state of another
 * status is set (open-gate.ts). Resolving twice changes nothing.
 */
export async function resolveIncident(ctx: IncidentsCtx, id: string): Promise<IncidentT> {
  return ctx.db.transaction(async (tx) => resolveLocked(tx, ctx, await lockIncident(tx, ctx.org.id, id)));
}

async function resolveLocked(tx: Executor, ctx: IncidentsCtx, row: IncidentRow): Promise<IncidentT> {
  if (row.status === 'resolved') return toIncident(row);
  const now = ctx.clock.now();
  const [updated] = await tx.query<IncidentRow>(
    `UPDATE incidents SET status = 'resolved', resolved_at = $2, resolved_by = $3, ended_at = $2, recovering_since = NULL, next_reminder_at = NULL, updated_at = $2
      WHERE id = $1 RETURNING *`, [row.id, now, userIdOf(ctx.actor)]);
  if (row.source === 'monitor' && row.target_id) {
    const [target] = await tx.query<{ kind: string; notify_recovery: boolean }>('SELECT kind, notify_recovery FROM targets WHERE id = $1', [row.target_id]);
    if (target?.kind !== 'manual') await tx.query('UPDATE alert_streaks SET failing = 0, failing_since = NULL WHERE target_id = $1', [row.target_id]);
    // Closed by hand, it still ends: the channels that were paged hear so, as on a recovery.
    if (target?.notify_recovery) await enqueueNotifications(tx, [{ orgId: row.org_id, incidentId: row.id, targetId: row.target_id, event: 'recovered' }], now);
  }
  await note(tx, ctx, row.id, 'resolved', now);
  return toIncident(updated!);
}

const IMPACT_ORDER: IncidentT['impact'][] = ['degraded', 'partial_outage', 'major_outage'];

/**
 * A monitor's incident history as periods: incidents that overlap merge into one, at the worst
 * impact among them. Newest first; `ongoing_only` keeps the open one.
 */
export async function targetIncidentPeriods(ctx: IncidentsCtx & { plan: EffectivePlan }, targetId: string, query: TargetIncidents) {
  await getTargetRowInOrg(ctx.db, ctx.org.id, targetId);
  const { limit = 50, offset = 0 } = query;
  const { from, to } = resultWindow(ctx.clock, ctx.plan, query);
  const rows = await ctx.db.query<{ id: string; started_at: Date; ended_at: Date | null; impact: IncidentT['impact'] }>(
    `SELECT id, started_at, ended_at, impact FROM incidents
      WHERE org_id = $1 AND (target_id = $2 OR id IN (SELECT incident_id FROM incident_targets WHERE target_id = $2)) AND started_at < $4 AND (ended_at IS NULL OR ended_at > $3)
      ORDER BY started_at, id`, [ctx.org.id, targetId, from, to]);
  const periods: { started_at: string; ended_at: string | null; ongoing: boolean; impact: IncidentT['impact']; incident_ids: string[]; end: number }[] = [];
  for (const row of rows) {
    const end = row.ended_at?.getTime() ?? Infinity;
    const last = periods.at(-1);
    if (last && row.started_at.getTime() <= last.end) {
      last.incident_ids.push(row.id);
      if (IMPACT_ORDER.indexOf(row.impact) > IMPACT_ORDER.indexOf(last.impact)) last.impact = row.impact;
      if (end > last.end) {
        last.end = end;
        last.ended_at = row.ended_at?.toISOString() ?? null;
        last.ongoing = row.ended_at === null;
      }
    } else {
      periods.push({ started_at: row.started_at.toISOString(), ended_at: row.ended_at?.toISOString() ?? null, ongoing: row.ended_at === null, impact: row.impact, incident_ids: [row.id], end });
    }
  }
  const chosen = periods.filter((p) => !query.ongoing_only || p.ongoing).reverse();
  return {
    incidents: chosen.slice(offset, offset + limit).map(({ end: _end, ...period }) => period),
    total: chosen.length, limit, offset,
  };
}

const IMPACT_OF_SEVERITY: Record<DeclareIncident['severity'], IncidentT['impact']> = { critical: 'major_outage', major: 'partial_outage', minor: 'degraded' };

/** A person's incident: open from now until resolved by hand. */
export async function declareIncident(ctx: IncidentsCtx, input: DeclareIncident) {
  const title = requiredText(input.title, 'title');
  const id = await ctx.db.transaction(async (tx) => {
    const targetIds = await checkOwnMonitorIds(tx, ctx.org.id, input.target_ids ?? [], 'target_ids');
    const now = ctx.clock.now();
    const id = newId();
    await tx.query(
      `INSERT INTO incidents (id, org_id, source, status, title, severity, impact, counts_as_downtime, started_at, created_at, updated_at)
       VALUES ($1, $2, 'declared', 'open', $3, $4, $5, $6, $7, $7, $7)`,
      [id, ctx.org.id, title, input.severity, IMPACT_OF_SEVERITY[input.severity], input.counts_as_downtime ?? false, now]);
    if (targetIds.length) {
      await tx.query('INSERT INTO incident_targets (incident_id, target_id) SELECT $1, unnest($2::uuid[])', [id, targetIds]);
    }
    await note(tx, ctx, id, 'declared', now, { title, severity: input.severity, target_ids: targetIds });
    return id;
  });
  return getIncident(ctx, id);
}

/**
 * The incident, locked, for narration: 404 for an unknown or foreign id before 403
 * `INCIDENT_NARRATION_DISABLED` on a plan without narration, so the plan says nothing about ids.
 */
async function lockForNarration(tx: Executor, ctx: IncidentsCtx & { plan: EffectivePlan }, id: string): Promise<IncidentRow> {
  const row = await lockIncident(tx, ctx.org.id, id);
  if (!ctx.plan.flags.incident_narration_enabled) throw new AppError(403, 'INCIDENT_NARRATION_DISABLED', 'this plan includes no incident narration');
  return row;
}

/** Narration fields: null clears, omitted leaves; a declared title stays; downtime is a declared incident's call. */
export async function narrateIncident(ctx: IncidentsCtx & { plan: EffectivePlan }, id: string, input: PatchIncident) {
  await ctx.db.transaction(async (tx) => {
    const row = await lockForNarration(tx, ctx, id);
    if (input.counts_as_downtime !== undefined && row.source === 'monitor') {
      throw new AppError(422, 'VALIDATION_FAILED', 'counts_as_downtime: only a declared incident sets it; a monitor incident counts by its checks', { field: 'counts_as_downtime' });
    }
    const title = input.title === undefined || input.title === null ? input.title : input.title.trim();
    if ((title === null || title === '') && row.source === 'declared') {
      throw new AppError(400, 'VALIDATION_FAILED', 'title: a declared incident keeps its title', { field: 'title' });
    }
    const changes: Record<string, unknown> = {};
    if (title !== undefined) changes.title = title || null;
    for (const key of ['public_title', 'public_description', 'severity'] as const) {
      const value = input[key];
      if (value !== undefined) changes[key] = typeof value === 'string' ? value.trim() || null : value;
    }
    // Cleared, it is its default again: the column holds a yes or no.
    if (input.counts_as_downtime !== undefined) changes.counts_as_downtime = input.counts_as_downtime ?? false;
    if (changes.severity && row.source === 'declared') changes.impact = IMPACT_OF_SEVERITY[changes.severity as DeclareIncident['severity']];
    const keys = Object.keys(changes);
    if (!keys.length) return;
    const now = ctx.clock.now();
    await tx.query(
      `UPDATE incidents SET ${keys.map((k, i) => `${k} = $${i + 3}`).join(', ')}, updated_at = $2 WHERE id = $1`,
      [id, now, ...keys.map((k) => changes[k])]);
    await note(tx, ctx, id, 'narrated', now, { changed: keys });
  });
  return getIncident(ctx, id);
}

/** A public update; `resolved` on an open incident resolves it too. */
export async function postIncidentUpdate(ctx: IncidentsCtx & { plan: EffectivePlan }, id: string, input: PostIncidentUpdate) {
  await ctx.db.transaction(async (tx) => {
    const row = await lockForNarration(tx, ctx, id);
    // After the lock: a foreign id is 404 before a blank message is 400.
    const message = requiredText(input.message, 'message');
    const now = ctx.clock.now();
    await tx.query('INSERT INTO incident_updates (id, incident_id, phase, message, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [newId(), id, input.phase, message, userIdOf(ctx.actor), now]);
    await note(tx, ctx, id, 'update_posted', now, { phase: input.phase });
    if (input.phase === 'resolved') await resolveLocked(tx, ctx, row);
  });
  return getIncident(ctx, id);
}
