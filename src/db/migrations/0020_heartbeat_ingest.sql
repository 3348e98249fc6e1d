-- Heartbeat ingest and evaluation (monitoring-api.md, "Heartbeat record", "Heartbeat ping endpoint",
-- "Heartbeat monitor" transitions). The verdict lives on the heartbeat row, changed only under its
-- row lock (ping batches and the evaluation sweep). `due_at` is when an `up` heartbeat must next be
-- looked at, so the sweep reads an index, not every monitor. It may be early, never late: a routine
-- success leaves it alone and the sweep moves a stale one on, so the common update touches only
-- unindexed columns and, with room left on the page (fillfactor), no index at all (HOT).

ALTER TABLE heartbeats
  ADD COLUMN status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'up', 'down')),
  ADD COLUMN first_ping_at timestamptz,
  ADD COLUMN last_ping_at timestamptz,
  ADD COLUMN last_success_at timestamptz,
  ADD COLUMN last_start_at timestamptz,
  -- Set while a `/start`ed run has not finished.
  ADD COLUMN run_started_at timestamptz,
  ADD COLUMN last_fail_at timestamptz,
  ADD COLUMN last_exit_code smallint,
  ADD COLUMN last_fail_ping_id uuid,
  -- Where the silence clock counts from: the last success, or a resume.
  ADD COLUMN window_from timestamptz,
  ADD COLUMN due_at timestamptz,
  ADD COLUMN previous_token_hash text UNIQUE,
  ADD COLUMN previous_expires_at timestamptz,
  ADD COLUMN previous_last_used_at timestamptz,
  ADD COLUMN rotated_at timestamptz;

CREATE INDEX heartbeats_due_idx ON heartbeats (due_at) WHERE status = 'up';
ALTER TABLE heartbeats SET (fillfactor = 70);

-- Every accepted ping (the ping log): cadence advice reads the successes of the last 14 days;
-- `output` (a POST body, at most 4 KiB) is cleared on a shorter clock than the row.
-- `counted` is false for a ping that arrived while the monitor was paused or held.
CREATE TABLE heartbeat_pings (
  id uuid PRIMARY KEY,
  target_id uuid NOT NULL REFERENCES heartbeats(target_id) ON DELETE CASCADE,
  received_at timestamptz NOT NULL,
  signal text NOT NULL CHECK (signal IN ('success', 'start', 'fail')),
  exit_code smallint CHECK (exit_code BETWEEN 0 AND 255),
  run_ms integer,
  counted boolean NOT NULL,
  output text
);
CREATE INDEX heartbeat_pings_by_target ON heartbeat_pings (target_id, received_at);
-- The log grows in time order: a BRIN index serves the retention sweep at almost no insert cost.
CREATE INDEX heartbeat_pings_by_time ON heartbeat_pings USING brin (received_at);
