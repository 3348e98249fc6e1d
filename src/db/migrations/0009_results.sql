-- Check results (monitoring-api.md, "Check result"; CONTRACT.md): one row per check per region.
-- `region` is 'none' for results no probe produced (heartbeat pings, hand-set manual states).
-- `timings` are the per-phase milliseconds, `fields` the per-kind result fields.
-- Rows go with their monitor; the retention sweep trims old ones.

CREATE TABLE check_results (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  target_id uuid NOT NULL REFERENCES targets(id) ON DELETE CASCADE,
  org_id uuid NOT NULL,
  region text NOT NULL,
  checked_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('up', 'degraded', 'down', 'error')),
  duration_ms integer NOT NULL CHECK (duration_ms >= 0),
  error text,
  timings jsonb,
  fields jsonb
);

CREATE INDEX check_results_by_target ON check_results (target_id, checked_at DESC, id DESC);
CREATE INDEX check_results_by_time ON check_results (checked_at);
