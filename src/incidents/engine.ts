// The incident engine: folded into the transaction that writes a batch of results, so each result
// is judged exactly once and an incident change commits with the results that caused it. Per batch:
// the monitors' alert config, their streak rows and open incidents are read (locked, in one order,
// so two nodes writing results of one monitor wait for each other), each monitor's results are
// fed to the rule (verdict.ts) in time order, and what changed is written back.
import type { Executor } from '../db/db.js';
import { enqueueNotifications, reminderGapMs, type Enqueue } from '../notifications/index.js';
import type { CheckResultRecord } from '../results/types.js';
import { writeAuditMany } from '../shared/audit.js';
import type { Actor } from '../shared/context.js';
import { newId } from '../shared/ids.js';
import type { CheckKind } from '../targets/constants.js';
import type { RegionPolicyT } from '../targets/schema.js';
import { applyResult, type AlertRule, type MonitorState, type OpenIncident, type RegionStreak, type Transition } from './verdict.js';

export type Impact = 'degraded' | 'partial_outage' | 'major_outage';
const IMPACT_RANK: Record<Impact, number> = { degraded: 0, partial_outage: 1, major_outage: 2 };

interface TargetAlertRow {
  id: string; org_id: string; name: string; kind: CheckKind;
  alert_confirmations: number; region_policy: RegionPolicyT; recovery_period_secs: number; region_count: number;
  notify_recovery: boolean; renotify_interval_secs: number;
}
interface StreakRow { target_id: string; region: string; failing: number; failing_since: Date | null; passing: number; passing_since: Date | null }
interface IncidentRow {
  id: string; target_id: string; started_at: Date; recovering_since: Date | null; recovered: { from: string; until: string }[];
  impact: Impact; cause: string | null;
}

/**
 * Heartbeat verdicts and manual states are each one decision, made once: they confirm at once, in
 * one "region", and close as soon as they pass. A manual `degraded` is a failure someone declared.
 */
export function alertRuleOf(row: TargetAlertRow): AlertRule {
  if (row.kind === 'manual' || row.kind === 'heartbeat') {
    return { confirmations: 1, policy: 'any', recoveryPeriodMs: 0, regionCount: 1, degradedFails: row.kind === 'manual' };
  }
  return { confirmations: row.alert_confirmations, policy: row.region_policy, recoveryPeriodMs: row.recovery_period_secs * 1000, regionCount: Math.max(1, row.region_count) };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** An incident this batch touched: its rule state (the last while open), and the columns it sets. */
interface Changed {
  row: IncidentRow | null; id: string; orgId: string; targetId: string; startedAt: number; incident: OpenIncident | null;
  impact: Impact; cause: string | null; endedAt: number | null; title: string;
  notifyRecovery: boolean; renotifySecs: number;
}
interface EventRow { incidentId: string; at: number; kind: string; message: string | null }

export async function foldIntoIncidents(tx: Executor, records: readonly CheckResultRecord[]): Promise<void> {
  if (!records.length) return;
  const targetIds = [...new Set(records.map((r) => r.targetId))].sort();
  const targets = await tx.query<TargetAlertRow>(
    `SELECT id, org_id, name, kind, alert_confirmations, region_policy, recovery_period_secs, cardinality(regions) AS region_count,
            notify_recovery, renotify_interval_secs
       FROM targets WHERE id = ANY($1::uuid[])`, [targetIds]);
  if (!targets.length) return;
  const live = targets.map((t) => t.id).sort();
  const streakRows = await tx.query<StreakRow>(
    'SELECT * FROM alert_streaks WHERE target_id = ANY($1::uuid[]) ORDER BY target_id, region FOR UPDATE', [live]);
  const openRows = await tx.query<IncidentRow>(
    `SELECT id, target_id, started_at, recovering_since, recovered, impact, cause FROM incidents
      WHERE target_id = ANY($1::uuid[]) AND source = 'monitor' AND status = 'open' ORDER BY target_id FOR UPDATE`, [live]);

  const suppressed = await suppressingWindows(tx, live, records);

  const byTarget = new Map<string, CheckResultRecord[]>();
  for (const r of records) {
    const list = byTarget.get(r.targetId);
    if (list) list.push(r);
    else byTarget.set(r.targetId, [r]);
  }
  const streaksOf = new Map<string, Record<string, RegionStreak>>();
  for (const s of streakRows) {
    const regions = streaksOf.get(s.target_id) ?? {};
    regions[s.region] = { failing: s.failing, failingSince: s.failing_since?.getTime() ?? null, passing: s.passing, passingSince: s.passing_since?.getTime() ?? null };
    streaksOf.set(s.target_id, regions);
  }
  const openOf = new Map(openRows.map((row) => [row.target_id, row]));

  const streakWrites: { targetId: string; region: string; streak: RegionStreak }[] = [];
  const changed: Changed[] = [];
  const events: EventRow[] = [];
  for (const target of targets) {
    const rule = alertRuleOf(target);
    const open = openOf.get(target.id) ?? null;
    let state: MonitorState = {
      regions: streaksOf.get(target.id) ?? {},
      incident: open && {
        startedAt: open.started_at.getTime(), recoveringSince: open.recovering_since?.getTime() ?? null,
        recovered: open.recovered.map((s) => ({ from: Date.parse(s.from), until: Date.parse(s.until) })),
      },
    };
    let current: Changed | null = open && {
      row: open, id: open.id, orgId: target.org_id, targetId: target.id, startedAt: open.started_at.getTime(), incident: state.incident,
      impact: open.impact, cause: open.cause, endedAt: null, title: '', notifyRecovery: target.notify_recovery, renotifySecs: target.renotify_interval_secs,
    };
    let touched = false;
    const results = byTarget.get(target.id)!.sort((a, b) => a.checkedAt.getTime() - b.checkedAt.getTime());
    for (const result of results) {
      const at = result.checkedAt.getTime();
      const out = applyResult(state, rule, result.region, result.status, at);
      if (out.transitions.some((t) => t.kind === 'open') && suppressed.get(target.id)?.some((w) => at >= w.from && at < w.until)) {
        // Under a maintenance window that suppresses alerts: the streaks go on, no incident opens;
        // a monitor still failing when the window ends opens one with its next failure.
        state = { ...out.state, incident: null };
        continue;
      }
      state = out.state;
      for (const t of out.transitions) {
        current = onTransition(t, current, target, rule, result, events);
        touched = true;
        if (t.kind === 'closed') {
          changed.push(current!);
          current = null;
        }
      }
      // A manual state set down or degraded on an open incident: its note becomes the cause, and
      // a worse state raises the incident.
      if (target.kind === 'manual' && current && result.status !== 'up' && !out.transitions.some((t) => t.kind === 'open')) {
        const impact: Impact = result.status === 'down' ? 'major_outage' : 'degraded';
        if (IMPACT_RANK[impact] > IMPACT_RANK[current.impact]) {
          events.push({ incidentId: current.id, at, kind: 'raised', message: `raised to ${impact} by a state set by hand` });
          current.impact = impact;
        }
        current.cause = result.error;
        touched = true;
      }
      if (current) current.incident = state.incident;
    }
    if (current && touched) changed.push(current);
    const stored = streaksOf.get(target.id) ?? {};
    for (const [region, streak] of Object.entries(state.regions)) {
      if (streak !== stored[region]) streakWrites.push({ targetId: target.id, region, streak });
    }
  }

  await writeStreaks(tx, streakWrites);
  await writeIncidents(tx, changed);
  if (events.length) {
    await tx.query(
      `INSERT INTO incident_events (id, incident_id, at, kind, message)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::text[])`,
      [events.map(() => newId()), events.map((e) => e.incidentId), events.map((e) => iso(e.at)), events.map((e) => e.kind), events.map((e) => e.message)]);
  }
}

function onTransition(t: Transition, current: Changed | null, target: TargetAlertRow, rule: AlertRule, result: CheckResultRecord, events: EventRow[]): Changed | null {
  switch (t.kind) {
    case 'open': {
      const impact: Impact = result.status === 'degraded' ? 'degraded' : t.regionsDown >= rule.regionCount ? 'major_outage' : 'partial_outage';
      const opened: Changed = {
        row: null, id: newId(), orgId: target.org_id, targetId: target.id, startedAt: t.startedAt, incident: null, impact, cause: result.error, endedAt: null,
        title: `${target.name} is ${result.status === 'degraded' ? 'degraded' : 'down'}`,
        notifyRecovery: target.notify_recovery, renotifySecs: target.renotify_interval_secs,
      };
      events.push({ incidentId: opened.id, at: t.startedAt, kind: 'opened', message: result.error });
      return opened;
    }
    case 'recovering':
      events.push({ incidentId: current!.id, at: t.since, kind: 'recovering', message: null });
      return current;
    case 'relapsed':
      events.push({ incidentId: current!.id, at: t.stretch.until, kind: 'relapsed', message: result.error });
      return current;
    case 'closed':
      events.push({ incidentId: current!.id, at: t.endedAt, kind: 'closed', message: null });
      return { ...current!, endedAt: t.endedAt };
  }
}

async function writeStreaks(tx: Executor, rows: readonly { targetId: string; region: string; streak: RegionStreak }[]): Promise<void> {
  if (!rows.length) return;
  const since = (ms: number | null): string | null => (ms === null ? null : iso(ms));
  await tx.query(
    `INSERT INTO alert_streaks (target_id, region, failing, failing_since, passing, passing_since)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::timestamptz[], $5::int[], $6::timestamptz[])
     ON CONFLICT (target_id, region) DO UPDATE SET failing = excluded.failing, failing_since = excluded.failing_since,
       passing = excluded.passing, passing_since = excluded.passing_since`,
    [rows.map((r) => r.targetId), rows.map((r) => r.region), rows.map((r) => r.streak.failing), rows.map((r) => since(r.streak.failingSince)),
      rows.map((r) => r.streak.passing), rows.map((r) => since(r.streak.passingSince))]);
}

/**
 * Writes the touched incidents and queues their notifications: one on open (with the first
 * reminder due an interval later), one on recovery unless `notify_recovery` is false.
 */
async function writeIncidents(tx: Executor, changes: readonly Changed[]): Promise<void> {
  const now = new Date();
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
                next_reminder_at = CASE WHEN $2 = 'resolved' THEN NULL ELSE next_reminder_at END
          WHERE id = $1`,
        [c.id, c.endedAt === null ? 'open' : 'resolved', c.impact, c.cause, c.endedAt === null ? null : iso(c.endedAt), recoveringSince, recovered, now]);
    }
  }
  await enqueueNotifications(tx, outbox, now);
  await writeAuditMany(tx, ENGINE, changes.flatMap((c) => [
    ...(!c.row ? [{ action: 'incident.opened', orgId: c.orgId, entityType: 'incident', entityId: c.id, details: { target_id: c.targetId, impact: c.impact } }] : []),
    ...(c.endedAt !== null ? [{ action: 'incident.closed', orgId: c.orgId, entityType: 'incident', entityId: c.id, details: { target_id: c.targetId, ended_at: iso(c.endedAt) } }] : []),
  ]));
}

/** The actor of what the engine does, in the audit log. */
const ENGINE: Actor = { type: 'system', job: 'incident-engine' };

/** Per monitor, the suppressing maintenance windows that overlap the batch's results. */
async function suppressingWindows(tx: Executor, targetIds: readonly string[], records: readonly CheckResultRecord[]): Promise<Map<string, { from: number; until: number }[]>> {
  const times = records.map((r) => r.checkedAt.getTime());
  const rows = await tx.query<{ target_id: string; starts_at: Date; ends_at: Date }>(
    `SELECT c.target_id, w.starts_at, w.ends_at FROM maintenance_components c JOIN maintenance_windows w ON w.id = c.window_id
      WHERE c.target_id = ANY($1::uuid[]) AND w.suppress_alerts AND w.deleted_at IS NULL AND w.starts_at <= $3 AND w.ends_at > $2`,
    [targetIds, iso(Math.min(...times)), iso(Math.max(...times))]);
  const out = new Map<string, { from: number; until: number }[]>();
  for (const r of rows) {
    const list = out.get(r.target_id) ?? [];
    list.push({ from: r.starts_at.getTime(), until: r.ends_at.getTime() });
    out.set(r.target_id, list);
  }
  return out;
}
