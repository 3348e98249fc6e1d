-- Acknowledge links in alerts (monitoring-api.md, "Notification channels": `acknowledge_button`):
-- a one-time-minted capability per alert, stored as its SHA-256, good for 7 days.
CREATE TABLE alert_actions (
  token_hash text PRIMARY KEY,
  incident_id uuid NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  channel_id uuid REFERENCES notification_channels(id) ON DELETE CASCADE,
  action text NOT NULL CHECK (action IN ('acknowledge')),
  expires_at timestamptz NOT NULL
);
CREATE INDEX alert_actions_expiry ON alert_actions (expires_at);
