-- Every replaced ping URL keeps working 24 hours from its own replacement (monitoring-api.md,
-- "Heartbeat ping endpoint" rule 5), however many rotations follow. The latest replaced URL stays in
-- `previous_*` (what the record shows); a rotation during its overlap moves it here, beside its
-- expiry (parallel arrays, older first). On the row, so the ingest finds and locks a heartbeat by
-- any of its URLs in one statement, and a revocation is seen from its commit. The GIN index changes
-- only when a rotation does: a routine ping's update stays heap-only.
ALTER TABLE heartbeats
  ADD COLUMN retired_token_hashes text[] NOT NULL DEFAULT '{}',
  ADD COLUMN retired_expires_at timestamptz[] NOT NULL DEFAULT '{}';
CREATE INDEX heartbeats_retired_tokens_idx ON heartbeats USING gin (retired_token_hashes);
