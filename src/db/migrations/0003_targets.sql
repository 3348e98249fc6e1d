-- Targets (monitors). The check is stored as validated JSONB (STYLE 15) with credentials sealed in
-- place (src/shared/seal.ts); `kind` repeats its `type` for filtering and counting.
-- `account_id` repeats the org's account: it is the quota subject, counted under a per-account
-- advisory lock. `variable_refs` lists every `{{key}}` the check references (sealed flow fill
-- values included), so a variable's `used_by` is an index lookup.

CREATE TABLE targets (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts(id),
  name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('http', 'tcp', 'ping', 'dns', 'heartbeat', 'manual', 'tls_cert', 'domain_expiry', 'flow')),
  check_spec jsonb NOT NULL,
  interval_secs integer NOT NULL CHECK (interval_secs > 0),
  enabled boolean NOT NULL DEFAULT true,
  tags text[] NOT NULL DEFAULT '{}',
  regions text[] NOT NULL DEFAULT '{}',
  group_name text,
  owner_user_id uuid REFERENCES users(id) ON DELETE SET NULL,
  alert_channel_ids uuid[] NOT NULL DEFAULT '{}',
  alert_confirmations integer NOT NULL DEFAULT 2 CHECK (alert_confirmations >= 1),
  notify_recovery boolean NOT NULL DEFAULT true,
  renotify_interval_secs integer NOT NULL DEFAULT 3600 CHECK (renotify_interval_secs = 0 OR renotify_interval_secs >= 60),
  recovery_period_secs integer NOT NULL DEFAULT 0 CHECK (recovery_period_secs BETWEEN 0 AND 1800),
  region_policy jsonb NOT NULL DEFAULT '"majority"',
  variable_refs text[] NOT NULL DEFAULT '{}',
  write_source text NOT NULL CHECK (write_source IN ('ui', 'api', 'iac')),
  held_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT targets_kind_matches_check CHECK (check_spec->>'type' = kind)
);
CREATE INDEX targets_org_idx ON targets (org_id, id);
CREATE INDEX targets_account_kind_idx ON targets (account_id, kind);
CREATE INDEX targets_tags_idx ON targets USING gin (tags);
CREATE INDEX targets_variable_refs_idx ON targets USING gin (variable_refs);
