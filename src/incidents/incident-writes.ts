// What the incident engine writes back: streaks, touched incidents with their notifications and
// audit rows, and timeline events. Shared by the fold over results (engine.ts) and the close of a
// recovery the clock ends (recovery-wait.ts), so an incident is written one way whoever closes it.
import type { Executor } from '../db/db.js';
import { enqueueNotifications, reminderGapMs, type Enqueue } from '../notifications/index.js';
import { writeAuditMany } from '../shared/audit.js';
import type { Actor } from '../shared/context.js';
import { newId } from '../shared/ids.js';
import type { OpenIncident, RegionStreak } from './verdict.js';

export type Impact = 'degraded' | 'partial_outage' | 'major_outage';
export const IMPACT_RANK: Record<Impact, number> = { degraded: 0, partial_outage: 1, major_outage: 2 };

export interface IncidentRow {
  id: string; target_id: string; started_at: Date; recovering_since: Date | null; recovered: { from: string; until: string }[];
  impact: Impact; cause: string | null;
}

/**
 * An incident the engine touched: its rule state (the last while open), and the columns it sets.
 * `accountId` is the monitor's, so the engine's audit rows land in the account's log like any other.
 */
export interface Changed {
  row: IncidentRow | null; id: string; orgId: string; accountId: string; targetId: string; startedAt: number; incident: OpenIncident | null;
  impact: Impact; cause: string | null; endedAt: number | null; title: string;
  notifyRecovery: boolean; renotifySecs: number;
  /** An open incident's engine-made title to replace (a raised manual state), unless someone has written another since. */
  retitle?: { from: string; to: string };
}
export interface EventRow { incidentId: string; at: number; kind: string; message: string | null }
export interface StreakWrite { targetId: string; region: string; streak: RegionStreak }

/** The actor of what the engine does, in the audit log. */
const ENGINE: Actor = { type: 'system', job: 'incident-engine' };

export const iso = (ms: number): string => new Date(ms).toISOString();

/** The rule state of an open incident row. */
export function openIncidentOf(row: IncidentRow): OpenIncident {
  return {
    startedAt: row.started_at.getTime(), recoveringSince: row.recovering_since?.getTime() ?? null,
    recovered: row.recovered.map((s) => ({ from: Date.parse(s.from), until: Date.parse(s.until) })),
  };
}

export async function writeStreaks(tx: Executor, rows: readonly StreakWrite[]): Promise<void> {
  if (!rows.length) return;
  const since = (ms: number | null): string | null => (ms === null ? null : iso(ms));
  await tx.query(
    `INSERT INTO alert_streaks (target_id, region, failing, failing_since, passing, passing_since)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::timestamptz[], $5::int[], $6::timestamptz[])
     ON CONFLICT (target_id, region) DO UPDATE SET failing = excluded.failing, failing_since = excluded.failing_since,
       passing = excluded.passing, passing_since = excluded.passing_since`,
    [rows.map((r) => r.targetId), rows.map((r) => r.region), rows.map((r) => r.streak.failing), rows.map((r) => since(r.streak.failingSince)),
      rows.map((r) => r.streak.passing), rows.map((r) => since(r.streak.passingSince))], { prepared: 'incident_streaks_save' });
}

/** Drops streaks of regions that no longer count (the caller holds their locks). */
export async function deleteStreaks(tx: Executor, rows: readonly { targetId: string; region: string }[]): Promise<void> {
  if (!rows.length) return;
  await tx.query(
    'DELETE FROM alert_streaks s USING unnest($1::uuid[], $2::text[]) AS d(target_id, region) WHERE s.target_id = d.target_id AND s.region = d.region',
    [rows.map((r) => r.targetId), rows.map((r) => r.region)]);
}

export async function writeEvents(tx: Executor, events: readonly EventRow[]): Promise<void> {
  if (!events.length) return;
  await tx.query(
    `INSERT INTO incident_events (id, incident_id, at, kind, message)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::text[])`,
    [events.map(() => newId()), events.map((e) => e.incidentId), events.map((e) => iso(e.at)), events.map((e) => e.kind), events.map((e) => e.message)]);
}

/**
 * Writes the touched incidents and queues their notifications: one on open (with the first
 * reminder due an interval later), one on recovery unless `notify_recovery` is false.
 */
export async function writeIncidents(tx: Executor, changes: readonly Changed[], now: Date): Promise<void> {
  const outbox: Enqueue[] = [];
  for (const c of changes) {
    const notify = (event: Enqueue['event']): number => outbox.push({ orgId: c.orgId, incidentId: c.id, targetId: c.targetId, event });
    if (!c.row) notify('opened');
    if (c.endedAt !== null && c.notifyRecovery) notify('recovered');
    const firstReminder = !c.row && c.endedAt === null && c.renotifySecs > 0 ? new Date(now.getTime() + reminderGapMs(c.renotifySecs, 0)) : null;
    const inc = c.incident;
    const recovered = JSON.stringify((inc?.recovered ?? []).map((s) => ({ from: iso(s.from), until: iso(s.until) })));
    const recoveringSince = c.endedAt !== null || inc?.recoveringSince == null ? null : iso(inc.recoveringSince);
    if (!c.row) {
      // A fresh incident: opened, and perhaps already closed, within this batch.
      await tx.query(
        `INSERT INTO incidents (id, org_id, source, target_id, status, title, impact, cause, started_at, ended_at, recovering_since, recovered,
                                next_reminder_at, created_at, updated_at)
         VALUES ($1, $2, 'monitor', $3, $4, $5, $6, $7, $8, $9, $10, $11, $13, $12, $12)`,
        [c.id, c.orgId, c.targetId, c.endedAt === null ? 'open' : 'resolved', c.title, c.impact, c.cause,
          iso(c.startedAt), c.endedAt === null ? null : iso(c.endedAt), recoveringSince, recovered, now, firstReminder]);
    } else {
      await tx.query(
        `UPDATE incidents SET status = $2, impact = $3, cause = $4, ended_at = $5, recovering_since = $6, recovered = $7, updated_at = $8,
                next_reminder_at = CASE WHEN $2 = 'resolved' THEN NULL ELSE next_reminder_at END,
                title = CASE WHEN title = $9 THEN $10 ELSE title END
          WHERE id = $1`,
        [c.id, c.endedAt === null ? 'open' : 'resolved', c.impact, c.cause, c.endedAt === null ? null : iso(c.endedAt), recoveringSince, recovered, now,
          c.retitle?.from ?? null, c.retitle?.to ?? null]);
    }
  }
  await enqueueNotifications(tx, outbox, now);
  await writeAuditMany(tx, ENGINE, changes.flatMap((c) => [
    ...(!c.row ? [{ action: 'incident.opened', orgId: c.orgId, accountId: c.accountId, entityType: 'incident', entityId: c.id, details: { target_id: c.targetId, impact: c.impact } }] : []),
    ...(c.endedAt !== null ? [{ action: 'incident.closed', orgId: c.orgId, accountId: c.accountId, entityType: 'incident', entityId: c.id, details: { target_id: c.targetId, ended_at: iso(c.endedAt) } }] : []),
  ]));
}
