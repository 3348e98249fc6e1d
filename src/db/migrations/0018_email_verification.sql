-- Email channels start unverified and page only once the address owner follows the link mailed
-- to it (monitoring-api.md, "Notification channels": resend-verification). Other kinds are
-- verified from creation. The link's token is stored as its SHA-256.
ALTER TABLE notification_channels ADD COLUMN verified_at timestamptz;
ALTER TABLE notification_channels ADD COLUMN verification_token_hash text;
ALTER TABLE notification_channels ADD COLUMN verification_sent_at timestamptz;
UPDATE notification_channels SET verified_at = created_at WHERE kind <> 'email';
CREATE UNIQUE INDEX notification_channels_verification ON notification_channels (verification_token_hash) WHERE verification_token_hash IS NOT NULL;
