// A monitor deleted with an incident open: nothing could close that incident any more (its results
// stop, its row goes), so it ends with the deletion, in the same transaction. No recovery notice
// goes out, since the monitor did not recover; the timeline says why it ended.
import type { Executor } from '../db/db.js';
import { writeAuditMany } from '../shared/audit.js';
import type { Actor } from '../shared/context.js';
import { writeEvents } from './incident-writes.js';

/** Ends the open incidents of the monitors about to be deleted; call before the delete. */
export async function endIncidentsOfDeleted(tx: Executor, targetIds: readonly string[], now: Date, actor: Actor): Promise<void> {
  if (!targetIds.length) return;
  const ended = await tx.query<{ id: string; org_id: string; target_id: string }>(
    `UPDATE incidents SET status = 'resolved', ended_at = $2, recovering_since = NULL, next_reminder_at = NULL, updated_at = $2
      WHERE target_id = ANY($1::uuid[]) AND source = 'monitor' AND status = 'open' RETURNING id, org_id, target_id`,
    [targetIds, now]);
  if (!ended.length) return;
  await writeEvents(tx, ended.map((i) => ({ incidentId: i.id, at: now.getTime(), kind: 'closed', message: 'the monitor was deleted' })));
  await writeAuditMany(tx, actor, ended.map((i) => ({
    action: 'incident.closed', orgId: i.org_id, entityType: 'incident', entityId: i.id, details: { target_id: i.target_id, reason: 'monitor deleted' },
  })));
}
