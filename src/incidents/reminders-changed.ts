// A monitor whose reminder interval changes while an incident of it is open: the new interval
// applies from the change, so lowering it (3600 -> 60 s) brings the next reminder forward and
// turning reminders on for an incident opened without them schedules one. Raising it leaves a
// nearer reminder already due in place; turning them off (0) is the worker's to honour.
import type { Executor } from '../db/db.js';
import { reminderGapMs } from '../notifications/index.js';

export async function rescheduleReminders(tx: Executor, targetId: string, renotifySecs: number, now: Date): Promise<void> {
  if (renotifySecs <= 0) return;
  const open = await tx.query<{ id: string; reminders_sent: number; next_reminder_at: Date | null }>(
    `SELECT id, reminders_sent, next_reminder_at FROM incidents
      WHERE target_id = $1 AND source = 'monitor' AND status = 'open' AND acknowledged_at IS NULL`, [targetId]);
  for (const incident of open) {
    const next = new Date(now.getTime() + reminderGapMs(renotifySecs, incident.reminders_sent));
    if (incident.next_reminder_at && incident.next_reminder_at <= next) continue;
    await tx.query('UPDATE incidents SET next_reminder_at = $2 WHERE id = $1', [incident.id, next]);
  }
}
