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
  // The monitor's account rides along, so these audit rows land in the account's log as the delete's own do.
  const ended = await tx.query<{ id: string; org_id: string; account_id: string; target_id: string }>(
    `UPDATE incidents i SET status = 'resolved', ended_at = $2, recovering_since = NULL, next_reminder_at = NULL, updated_at = $2
       FROM targets t
      WHERE t.id = i.target_id AND i.target_id = ANY($1::uuid[]) AND i.source = 'monitor' AND i.status = 'open'
      RETURNING i.id, i.org_id, t.account_id, i.target_id`,
    [targetIds, now]);
  if (!ended.length) return;
  await writeEvents(tx, ended.map((i) => ({ incidentId: i.id, at: now.getTime(), kind: 'closed', message: 'the monitor was deleted' })));
  await writeAuditMany(tx, actor, ended.map((i) => ({
    action: 'incident.closed', orgId: i.org_id, accountId: i.account_id, entityType: 'incident', entityId: i.id, details: { target_id: i.target_id, reason: 'monitor deleted' },
  })));
}
