-- Notification channels. `config` is the validated channel config (CONTRACT.md, "Notification
-- channel config.type values") with its secrets sealed in place (src/shared/seal.ts), as targets
-- store credentials; `kind` repeats `config.type` for filtering. `auto_bind_tags` keeps one
-- spelling per case-insensitive tag. Bindings live on the monitor (`targets.alert_channel_ids`);
-- deleting a channel removes its id there in the same transaction.

CREATE TABLE notification_channels (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  account_id uuid NOT NULL REFERENCES accounts(id),
  name text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  kind text NOT NULL,
  config jsonb NOT NULL,
  auto_bind_tags text[] NOT NULL DEFAULT '{}',
  acknowledge_button boolean NOT NULL DEFAULT true,
  resolve_button boolean NOT NULL DEFAULT false,
  write_source text NOT NULL CHECK (write_source IN ('ui', 'api', 'iac')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT notification_channels_kind_matches_config CHECK (config->>'type' = kind)
);
CREATE INDEX notification_channels_org_idx ON notification_channels (org_id, id);
CREATE INDEX notification_channels_account_idx ON notification_channels (account_id);
CREATE INDEX targets_alert_channel_ids_idx ON targets USING gin (alert_channel_ids);
