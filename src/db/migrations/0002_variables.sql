-- Org variables, referenced by monitors as {{key}}. A secret's value lives only sealed
-- (src/shared/seal.ts: `kw1:...` under the KEK, or `plain:...` when none is configured);
-- a plain variable's value is stored as text. The checks keep the two from mixing.

CREATE TABLE variables (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  key text NOT NULL CHECK (key ~ '^[a-z][a-z0-9_]{0,62}$'),
  is_secret boolean NOT NULL,
  value text,
  sealed_value text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT variables_value_by_kind CHECK (
    (is_secret AND value IS NULL AND sealed_value IS NOT NULL) OR
    (NOT is_secret AND value IS NOT NULL AND sealed_value IS NULL)),
  CONSTRAINT variables_org_key_key UNIQUE (org_id, key)
);
