-- Maintenance windows (monitoring-api.md, "Maintenance window"; CONTRACT.md shape). The status is
-- never stored: upcoming, active or ended follow from the clock; cancelled is `deleted_at` set
-- (the window stays as history). Components are monitors of the same org, kept in order.

CREATE TABLE maintenance_windows (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts(id),
  title text NOT NULL,
  description text,
  starts_at timestamptz NOT NULL,
  ends_at timestamptz NOT NULL,
  suppress_alerts boolean NOT NULL DEFAULT true,
  write_source text NOT NULL CHECK (write_source IN ('ui', 'api', 'iac')),
  deleted_at timestamptz,
  deleted_by uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- Equal only when a window ended by PATCH at the instant it started.
  CONSTRAINT maintenance_windows_range CHECK (ends_at >= starts_at)
);
CREATE INDEX maintenance_windows_org_starts ON maintenance_windows (org_id, starts_at);
-- The quota counts an account's windows not yet ended.
CREATE INDEX maintenance_windows_account_live ON maintenance_windows (account_id, ends_at) WHERE deleted_at IS NULL;

CREATE TABLE maintenance_components (
  window_id uuid NOT NULL REFERENCES maintenance_windows(id) ON DELETE CASCADE,
  target_id uuid NOT NULL REFERENCES targets(id) ON DELETE CASCADE,
  position integer NOT NULL,
  PRIMARY KEY (window_id, target_id)
);
-- The incident engine asks "is this monitor under a suppressing window now?".
CREATE INDEX maintenance_components_target ON maintenance_components (target_id);

CREATE TABLE maintenance_updates (
  id uuid PRIMARY KEY,
  window_id uuid NOT NULL REFERENCES maintenance_windows(id) ON DELETE CASCADE,
  message text NOT NULL,
  created_by uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX maintenance_updates_window ON maintenance_updates (window_id, created_at);
