// A recovery the clock ends. The engine closes an incident when a result arrives after the
// recovery has lasted `recovery_period_secs`; a heartbeat writes a result only when its verdict
// changes, so after the `up` that starts its recovery none comes. Its incidents close here once the
// wait has run out, dated (as every close) to when the recovery began. The heartbeat evaluation
// sweep runs this with each pass; rows another node holds are left to it.
import type { Db } from '../db/db.js';
import { type Changed, type EventRow, type IncidentRow, openIncidentOf, writeEvents, writeIncidents } from './incident-writes.js';

/** Kinds whose results stop while they stay up. */
const TIMED_RECOVERY_KINDS = ['heartbeat'];
const BATCH = 100;

/** Closes the recoveries that have waited long enough by `now`; how many. */
export async function closeWaitedRecoveries(db: Db, now: Date): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = await tx.query<IncidentRow & { org_id: string; account_id: string; notify_recovery: boolean; renotify_interval_secs: number }>(
      `SELECT i.id, i.org_id, t.account_id, i.target_id, i.started_at, i.recovering_since, i.recovered, i.impact, i.cause, t.notify_recovery, t.renotify_interval_secs
         FROM incidents i JOIN targets t ON t.id = i.target_id
        WHERE i.source = 'monitor' AND i.status = 'open' AND i.recovering_since IS NOT NULL AND t.kind = ANY($2::text[])
          AND i.recovering_since + t.recovery_period_secs * interval '1 second' <= $1
        ORDER BY i.recovering_since LIMIT $3 FOR UPDATE OF i SKIP LOCKED`, [now, TIMED_RECOVERY_KINDS, BATCH]);
    const changes: Changed[] = rows.map((row) => ({
      row, id: row.id, orgId: row.org_id, accountId: row.account_id, targetId: row.target_id, startedAt: row.started_at.getTime(), incident: openIncidentOf(row),
      impact: row.impact, cause: row.cause, endedAt: row.recovering_since!.getTime(), title: '',
      notifyRecovery: row.notify_recovery, renotifySecs: row.renotify_interval_secs,
    }));
    const events: EventRow[] = changes.map((c) => ({ incidentId: c.id, at: c.endedAt!, kind: 'closed', message: null }));
    await writeIncidents(tx, changes, now);
    await writeEvents(tx, events);
    return changes.length;
  });
}
