-- Heartbeat monitors' ping URLs (monitoring-api.md, "Heartbeat ping endpoint"). The token is a
-- capability: looked up by its SHA-256 (32 random bytes need no slow hash), kept sealed
-- (src/shared/seal.ts) only so the heartbeat record can show the URL again.

CREATE TABLE heartbeats (
  target_id uuid PRIMARY KEY REFERENCES targets(id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  sealed_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX heartbeats_org_idx ON heartbeats (org_id);
