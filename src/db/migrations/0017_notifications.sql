-- Notifications (monitoring-api.md, "Events" 1): an outbox written in the transaction that changes
-- the incident, delivered at least once by src/notifications/worker.ts. A row's id is the
-- idempotency key its payload carries, so a receiver can drop a repeat.

CREATE TABLE notifications (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  incident_id uuid NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  channel_id uuid REFERENCES notification_channels(id) ON DELETE SET NULL,
  event text NOT NULL CHECK (event IN ('opened', 'reminder', 'recovered')),
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
  attempts integer NOT NULL DEFAULT 0,
  -- When the next attempt may start; a claimed row is pushed ahead by the claim's lease.
  next_attempt_at timestamptz NOT NULL,
  last_error text,
  created_at timestamptz NOT NULL,
  delivered_at timestamptz
);
CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE status = 'pending';
CREATE INDEX notifications_by_incident ON notifications (incident_id, created_at, id);

-- Reminders while an incident is open and unacknowledged (`renotify_interval_secs`).
ALTER TABLE incidents ADD COLUMN reminders_sent integer NOT NULL DEFAULT 0;
ALTER TABLE incidents ADD COLUMN next_reminder_at timestamptz;
CREATE INDEX incidents_reminders_due ON incidents (next_reminder_at) WHERE next_reminder_at IS NOT NULL;
