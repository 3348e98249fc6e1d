-- A team chat's incoming-webhook URL is now a secret field (src/channels/configs.ts): sealed at rest,
-- read back as `***`. URLs stored before were in clear; they become the sealer's unsealed form
-- (`plain:<url>`, as a secret is stored with no key configured), which delivery reads either way.
-- They are sealed under the key when the channel's config is next written: SQL holds no key.
UPDATE notification_channels
   SET config = jsonb_set(config, '{webhook_url}', to_jsonb('plain:' || (config->>'webhook_url')))
 WHERE kind IN ('slack', 'discord', 'teams')
   AND config->>'webhook_url' NOT LIKE 'plain:%' AND config->>'webhook_url' NOT LIKE 'kw1:%';
