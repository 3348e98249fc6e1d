-- Manual monitors' hand-set state (monitoring-api.md, "Manual state", "Manual monitor"). No row
-- until the first set: the state is then `up`, set at the monitor's creation, by nobody.
-- `set_by` goes null when the setter's account is purged.

CREATE TABLE manual_states (
  target_id uuid PRIMARY KEY REFERENCES targets(id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('up', 'degraded', 'down')),
  note text CHECK (char_length(note) <= 200),
  set_at timestamptz NOT NULL,
  set_by uuid REFERENCES users(id) ON DELETE SET NULL
);
