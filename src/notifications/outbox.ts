// The notification outbox: rows written in the transaction that changes an incident, one per
// channel that pages for the monitor: its `alerts` bindings plus every enabled channel whose
// `auto_bind_tags` share a tag with it (case-insensitive), each channel once. An email channel
// whose address is not yet confirmed does not page, nor does a monitor while a maintenance window
// that suppresses alerts covers it. A recovery goes only to channels the incident paged before
// (one disabled, unbound or unconfirmed when it opened never heard of it), window or not: it
// closes an alert already raised, and without it that alert would stay open for good.
import type { Executor } from '../db/db.js';
import { suppressedAtSql } from '../maintenance/index.js';
import { newId } from '../shared/ids.js';

export type NotificationEvent = 'opened' | 'reminder' | 'recovered';

export interface Enqueue { orgId: string; incidentId: string; targetId: string | null; event: NotificationEvent }

interface Paging { channelIds: string[]; suppressed: boolean }

/** Channels that page for each monitor, and whether a window suppresses its alerts at `now`, by monitor id. */
async function channelsFor(tx: Executor, targetIds: readonly string[], now: Date): Promise<Map<string, Paging>> {
  const rows = await tx.query<{ target_id: string; channel_id: string; suppressed: boolean }>(
    `SELECT t.id AS target_id, c.id AS channel_id, ${suppressedAtSql('t.id', '$2')} AS suppressed
       FROM targets t JOIN notification_channels c ON c.org_id = t.org_id AND c.enabled AND c.verified_at IS NOT NULL
      WHERE t.id = ANY($1::uuid[])
        AND (c.id = ANY(t.alert_channel_ids)
             OR EXISTS (SELECT 1 FROM unnest(c.auto_bind_tags) a JOIN unnest(t.tags) g ON lower(a) = lower(g)))
      ORDER BY t.id, c.id`, [targetIds, now]);
  const out = new Map<string, Paging>();
  for (const r of rows) {
    const paging = out.get(r.target_id) ?? { channelIds: [], suppressed: r.suppressed };
    paging.channelIds.push(r.channel_id);
    out.set(r.target_id, paging);
  }
  return out;
}

function channelsOf(paging: Paging | undefined, event: NotificationEvent): string[] {
  if (!paging || (paging.suppressed && event !== 'recovered')) return [];
  return paging.channelIds;
}

export async function enqueueNotifications(tx: Executor, items: readonly Enqueue[], now: Date): Promise<void> {
  const targetIds = [...new Set(items.flatMap((i) => (i.targetId ? [i.targetId] : [])))];
  if (!targetIds.length) return;
  const channels = await channelsFor(tx, targetIds, now);
  const rows = items.flatMap((item) => (item.targetId ? channelsOf(channels.get(item.targetId), item.event) : []).map((channelId) => ({ ...item, channelId })));
  if (!rows.length) return;
  await tx.query(
    `INSERT INTO notifications (id, org_id, incident_id, channel_id, event, status, next_attempt_at, created_at)
     SELECT r.id, r.org_id, r.incident_id, r.channel_id, r.event, 'pending', $6, $6
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[]) AS r(id, org_id, incident_id, channel_id, event)
      WHERE r.event <> 'recovered'
         OR EXISTS (SELECT 1 FROM notifications n WHERE n.incident_id = r.incident_id AND n.channel_id = r.channel_id)`,
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
