-- Incidents (monitoring-api.md, "Incident"; CONTRACT.md incident paths). The engine
-- (src/incidents/engine.ts) opens and closes monitor incidents in the transaction that writes the
-- results that caused it; the rule itself is src/incidents/verdict.ts.

CREATE TABLE incidents (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  source text NOT NULL CHECK (source IN ('monitor', 'declared')),
  -- The monitor of a monitor incident; kept (null) when the monitor is deleted, as history.
  target_id uuid REFERENCES targets(id) ON DELETE SET NULL,
  status text NOT NULL CHECK (status IN ('open', 'resolved')),
  title text,
  public_title text,
  public_description text,
  severity text,
  impact text NOT NULL CHECK (impact IN ('degraded', 'partial_outage', 'major_outage')),
  counts_as_downtime boolean NOT NULL DEFAULT true,
  cause text,
  started_at timestamptz NOT NULL,
  ended_at timestamptz,
  recovering_since timestamptz,
  recovered jsonb NOT NULL DEFAULT '[]',
  acknowledged_at timestamptz,
  acknowledged_by uuid REFERENCES users(id) ON DELETE SET NULL,
  resolved_at timestamptz,
  resolved_by uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- One open incident per monitor, however many nodes see its results.
CREATE UNIQUE INDEX incidents_one_open_per_target ON incidents (target_id) WHERE source = 'monitor' AND status = 'open';
CREATE INDEX incidents_by_org ON incidents (org_id, started_at DESC, id DESC);
CREATE INDEX incidents_by_target ON incidents (target_id, started_at DESC);

-- The internal timeline: what the engine and people did, in order.
CREATE TABLE incident_events (
  id uuid PRIMARY KEY,
  incident_id uuid NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  at timestamptz NOT NULL,
  kind text NOT NULL,
  message text,
  actor_user_id uuid REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX incident_events_by_incident ON incident_events (incident_id, at, id);

-- Per monitor and region, the current streaks of failing and passing checks.
CREATE TABLE alert_streaks (
  target_id uuid NOT NULL REFERENCES targets(id) ON DELETE CASCADE,
  region text NOT NULL,
  failing integer NOT NULL,
  failing_since timestamptz,
  passing integer NOT NULL,
  passing_since timestamptz,
  PRIMARY KEY (target_id, region)
);

-- The monitors a declared incident names (a monitor incident's is `incidents.target_id`).
CREATE TABLE incident_targets (
  incident_id uuid NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  target_id uuid NOT NULL REFERENCES targets(id) ON DELETE CASCADE,
  PRIMARY KEY (incident_id, target_id)
);
CREATE INDEX incident_targets_by_target ON incident_targets (target_id);

-- Public narration posted on an incident (monitoring-api.md, "Incident narration and updates").
CREATE TABLE incident_updates (
  id uuid PRIMARY KEY,
  incident_id uuid NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
  phase text NOT NULL CHECK (phase IN ('investigating', 'identified', 'monitoring', 'resolved', 'postmortem')),
  message text NOT NULL CHECK (char_length(message) <= 2000),
  created_by uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX incident_updates_by_incident ON incident_updates (incident_id, created_at, id);
