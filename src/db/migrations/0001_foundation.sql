-- Tenancy, plans, API tokens, regions and agents, audit and event logs.

CREATE TABLE settings (
  key text PRIMARY KEY,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE plans (
  id text PRIMARY KEY,
  name text NOT NULL,
  -- pooled quotas (NULL is unlimited)
  max_orgs integer, max_targets integer, max_flow_checks integer, max_regions integer, max_members integer,
  max_pending_invitations integer, max_api_tokens_per_user integer, max_status_pages integer,
  max_public_components integer, max_share_links_per_monitor integer, max_shared_monitors integer,
  max_maintenance_windows integer, max_notification_channels integer, max_escalation_policies integer,
  max_on_call_schedules integer,
  -- policy values
  min_check_interval_secs integer, retention_days integer, raw_days integer, evidence_days integer,
  max_flow_steps integer, max_logo_size_bytes integer,
  -- rate budgets per minute
  api_writes_per_minute integer, api_reads_per_minute integer, bulk_ops_per_minute integer,
  test_now_per_minute integer, check_now_per_minute integer,
  -- feature flags
  custom_domain_enabled boolean NOT NULL DEFAULT false, white_label_enabled boolean NOT NULL DEFAULT false,
  sms_alerts_enabled boolean NOT NULL DEFAULT false, incident_narration_enabled boolean NOT NULL DEFAULT false,
  on_call_enabled boolean NOT NULL DEFAULT false, private_pages_enabled boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  email_verified_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE accounts (
  id uuid PRIMARY KEY,
  owner_user_id uuid NOT NULL REFERENCES users(id),
  plan_id text NOT NULL REFERENCES plans(id),
  fallback_plan_id text REFERENCES plans(id),
  -- 'active' or 'grace' while a paid subscription is live; NULL otherwise.
  subscription_status text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX accounts_owner_idx ON accounts (owner_user_id);

CREATE TABLE plan_overrides (
  account_id uuid PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
  caps jsonb NOT NULL,
  reason text NOT NULL,
  expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE orgs (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id),
  slug text NOT NULL UNIQUE,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE INDEX orgs_account_idx ON orgs (account_id);

CREATE TABLE memberships (
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('Owner', 'Member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

CREATE TABLE api_tokens (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  org_id uuid REFERENCES orgs(id) ON DELETE CASCADE,
  name text NOT NULL,
  prefix text NOT NULL UNIQUE,
  token_hash text NOT NULL,
  scopes text[] NOT NULL,
  -- RFC 8707 audience; NULL for tokens minted in the UI or by the operator (valid everywhere).
  audience text,
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id) WHERE revoked_at IS NULL;

CREATE TABLE regions (
  id text PRIMARY KEY,
  name text NOT NULL,
  city text,
  country_code text,
  continent text,
  latitude double precision,
  longitude double precision,
  enabled boolean NOT NULL DEFAULT true,
  default_selected boolean NOT NULL DEFAULT false,
  flow_capable boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO regions (id, name, city, country_code, continent, latitude, longitude, enabled, default_selected, flow_capable)
VALUES ('local', 'Local', NULL, NULL, NULL, NULL, NULL, true, true, false);

CREATE TABLE agents (
  id uuid PRIMARY KEY,
  region_id text NOT NULL REFERENCES regions(id),
  name text NOT NULL,
  prefix text NOT NULL UNIQUE,
  token_hash text NOT NULL,
  last_seen_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE audit_log (
  id uuid PRIMARY KEY,
  org_id uuid,
  account_id uuid,
  actor_type text NOT NULL,
  actor_id text,
  action text NOT NULL,
  entity_type text,
  entity_id text,
  details jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_org_idx ON audit_log (org_id, created_at);
CREATE INDEX audit_log_account_idx ON audit_log (account_id, created_at);

CREATE TABLE account_billing_events (
  id uuid PRIMARY KEY,
  account_id uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  event text NOT NULL,
  reason text,
  details jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX account_billing_events_account_idx ON account_billing_events (account_id, created_at);

CREATE TABLE quota_events (
  id bigserial PRIMARY KEY,
  event text NOT NULL,
  quota text,
  account_id uuid,
  user_id uuid,
  details jsonb NOT NULL DEFAULT '{}',
  ip_hash text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quota_events_created_idx ON quota_events (created_at);

CREATE TABLE login_attempts (
  id bigserial PRIMARY KEY,
  method text NOT NULL,
  success boolean NOT NULL,
  failure_reason text,
  user_id uuid,
  token_id uuid,
  ip_hash text,
  user_agent_hash text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_attempts_created_idx ON login_attempts (created_at);

-- Shared rate-budget windows: each node adds its local counts here (see src/http/rate-budget.ts).
CREATE TABLE rate_counters (
  key text NOT NULL,
  window_start timestamptz NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (key, window_start)
);
