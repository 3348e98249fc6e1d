-- The in-app help form (service-api.md: POST /api/v1/support): every request is kept, so none is
-- lost when mail is down or not configured; `mailed_at` says whether it reached the support inbox.
CREATE TABLE support_requests (
  id uuid PRIMARY KEY,
  user_id uuid REFERENCES users(id) ON DELETE SET NULL,
  org_id uuid REFERENCES orgs(id) ON DELETE SET NULL,
  subject text,
  message text NOT NULL,
  created_at timestamptz NOT NULL,
  mailed_at timestamptz
);
CREATE INDEX support_requests_by_time ON support_requests (created_at);
