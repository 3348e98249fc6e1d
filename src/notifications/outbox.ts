// The notification outbox: rows written in the transaction that changes an incident. An opening or
// a reminder goes to each channel that pages for the monitor: its `alerts` bindings plus every
// enabled channel whose `auto_bind_tags` share a tag with it (case-insensitive), each channel once.
// An email channel whose address is not yet confirmed does not page, nor does a monitor while a
// maintenance window that suppresses alerts covers it. A recovery goes to the channels the incident
// paged, as they are now (still enabled and confirmed), bound to the monitor or not, window or not:
// it closes an alert they raised, which would otherwise stay open for good; a channel that never
// heard of the incident hears nothing of its end.
import type { Executor } from '../db/db.js';
import { suppressedAtSql } from '../maintenance/index.js';
import { newId } from '../shared/ids.js';

export type NotificationEvent = 'opened' | 'reminder' | 'recovered';

export interface Enqueue { orgId: string; incidentId: string; targetId: string | null; event: NotificationEvent }

/** Channels that page for each monitor at `now`, by monitor id. */
async function channelsFor(tx: Executor, targetIds: readonly string[], now: Date): Promise<Map<string, string[]>> {
  const rows = await tx.query<{ target_id: string; channel_id: string }>(
    `SELECT t.id AS target_id, c.id AS channel_id
       FROM targets t JOIN notification_channels c ON c.org_id = t.org_id AND c.enabled AND c.verified_at IS NOT NULL
      WHERE t.id = ANY($1::uuid[]) AND NOT ${suppressedAtSql('t.id', '$2')}
        AND (c.id = ANY(t.alert_channel_ids)
             OR EXISTS (SELECT 1 FROM unnest(c.auto_bind_tags) a JOIN unnest(t.tags) g ON lower(a) = lower(g)))
      ORDER BY t.id, c.id`, [targetIds, now]);
  return groupBy(rows, (r) => r.target_id);
}

/** Channels each incident paged that page still, by incident id. */
async function channelsPagedBy(tx: Executor, incidentIds: readonly string[]): Promise<Map<string, string[]>> {
  const rows = await tx.query<{ incident_id: string; channel_id: string }>(
    `SELECT DISTINCT n.incident_id, n.channel_id
       FROM notifications n JOIN notification_channels c ON c.id = n.channel_id AND c.enabled AND c.verified_at IS NOT NULL
      WHERE n.incident_id = ANY($1::uuid[])
      ORDER BY n.incident_id, n.channel_id`, [incidentIds]);
  return groupBy(rows, (r) => r.incident_id);
}

function groupBy<R extends { channel_id: string }>(rows: readonly R[], keyOf: (row: R) => string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const row of rows) out.set(keyOf(row), [...(out.get(keyOf(row)) ?? []), row.channel_id]);
  return out;
}

export async function enqueueNotifications(tx: Executor, items: readonly Enqueue[], now: Date): Promise<void> {
  const pages = items.filter((i) => i.event !== 'recovered' && i.targetId);
  const recoveries = items.filter((i) => i.event === 'recovered');
  const byTarget = pages.length ? await channelsFor(tx, [...new Set(pages.map((i) => i.targetId!))], now) : new Map<string, string[]>();
  const byIncident = recoveries.length ? await channelsPagedBy(tx, [...new Set(recoveries.map((i) => i.incidentId))]) : new Map<string, string[]>();
  const rows = [
    ...pages.flatMap((item) => (byTarget.get(item.targetId!) ?? []).map((channelId) => ({ ...item, channelId }))),
    ...recoveries.flatMap((item) => (byIncident.get(item.incidentId) ?? []).map((channelId) => ({ ...item, channelId }))),
  ];
  if (!rows.length) return;
  await tx.query(
    `INSERT INTO notifications (id, org_id, incident_id, channel_id, event, status, next_attempt_at, created_at)
     SELECT r.id, r.org_id, r.incident_id, r.channel_id, r.event, 'pending', $6, $6
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[]) AS r(id, org_id, incident_id, channel_id, event)`,
    [rows.map(() => newId()), rows.map((r) => r.orgId), rows.map((r) => r.incidentId), rows.map((r) => r.channelId), rows.map((r) => r.event), now]);
}

const DAY_MS = 86_400_000;

/**
 * The gap before reminder `n + 1` (n sent so far): the interval, doubling each time, capped at a
 * day; an interval already above a day keeps its cadence.
 */
export function reminderGapMs(intervalSecs: number, sent: number): number {
  const interval = intervalSecs * 1000;
  if (interval >= DAY_MS) return interval;
  return Math.min(DAY_MS, interval * 2 ** sent);
}
