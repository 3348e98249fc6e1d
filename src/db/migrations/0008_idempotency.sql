-- Idempotency keys (monitoring-api.md: duplicate accepts `Idempotency-Key`). The first request
-- with a key stores its answer in the same transaction as its effect; a retry with the same key
-- and the same request gets that answer again instead of a second effect. Keys live 24 hours.

CREATE TABLE idempotency_keys (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  key text NOT NULL,
  -- sha256 of method, path and body: the same key with another request is refused.
  request_hash text NOT NULL,
  status integer,
  response jsonb,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
