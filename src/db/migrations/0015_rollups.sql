-- Hourly and daily rollups of check results (DESIGN.md: "Per-hour and per-day rollups serve uptime
-- and latency over long windows"), maintained by the result writer in the transaction that inserts
-- the results. The rule that fills them is src/results/rollup.ts.

-- How long a result's status stands without a newer one (null: until the next one), so a range
-- read from raw results is attributed exactly as the rollups are.
ALTER TABLE check_results ADD COLUMN stale_after_ms bigint;

-- The latest result per monitor and region: where the next stretch of time-based uptime starts.
CREATE TABLE result_cursors (
  target_id uuid NOT NULL REFERENCES targets(id) ON DELETE CASCADE,
  region text NOT NULL,
  checked_at timestamptz NOT NULL,
  status text NOT NULL,
  -- How long the status stands without a newer result; null: until the next one.
  stale_after_ms bigint,
  PRIMARY KEY (target_id, region)
);

CREATE TABLE result_rollups (
  target_id uuid NOT NULL REFERENCES targets(id) ON DELETE CASCADE,
  region text NOT NULL,
  -- 'hour' or 'day' (UTC).
  granularity text NOT NULL CHECK (granularity IN ('hour', 'day')),
  bucket_start timestamptz NOT NULL,
  checks_up integer NOT NULL, checks_degraded integer NOT NULL, checks_down integer NOT NULL, checks_error integer NOT NULL,
  ms_up bigint NOT NULL, ms_degraded bigint NOT NULL, ms_down bigint NOT NULL, ms_error bigint NOT NULL,
  latency_count integer NOT NULL, latency_sum double precision NOT NULL,
  latency_min double precision NOT NULL, latency_max double precision NOT NULL,
  -- Log-scale latency histogram, sparse: the array's lower bound is the first bucket's index + 1.
  latency_hist integer[],
  dns_sum double precision NOT NULL, dns_count integer NOT NULL,
  connect_sum double precision NOT NULL, connect_count integer NOT NULL,
  tls_sum double precision NOT NULL, tls_count integer NOT NULL,
  first_byte_sum double precision NOT NULL, first_byte_count integer NOT NULL,
  transfer_sum double precision NOT NULL, transfer_count integer NOT NULL,
  PRIMARY KEY (target_id, granularity, bucket_start, region)
);
-- The retention sweep deletes by age.
CREATE INDEX result_rollups_by_age ON result_rollups (granularity, bucket_start);

-- Adds two sparse histograms bucket by bucket, keeping lower bounds (an upsert adds a batch's
-- histogram to the stored one without reading it first).
CREATE FUNCTION kw_hist_add(a integer[], b integer[]) RETURNS integer[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  lo integer;
  hi integer;
  r integer[];
BEGIN
  IF a IS NULL THEN RETURN b; END IF;
  IF b IS NULL THEN RETURN a; END IF;
  lo := least(array_lower(a, 1), array_lower(b, 1));
  hi := greatest(array_upper(a, 1), array_upper(b, 1));
  r := array_fill(0, ARRAY[hi - lo + 1], ARRAY[lo]);
  FOR i IN array_lower(a, 1)..array_upper(a, 1) LOOP r[i] := r[i] + a[i]; END LOOP;
  FOR i IN array_lower(b, 1)..array_upper(b, 1) LOOP r[i] := r[i] + b[i]; END LOOP;
  RETURN r;
END
$$;
