-- When a plan hold last moved on a monitor (src/targets/holds.ts). A hold is no edit of the
-- monitor's settings, so it no longer moves `updated_at` (clients read that to see edits); the
-- scheduler's poll for changed monitors reads this column beside it. Partial: most monitors are
-- never held.
ALTER TABLE targets ADD COLUMN hold_changed_at timestamptz;
CREATE INDEX targets_hold_changed_at_idx ON targets (hold_changed_at) WHERE hold_changed_at IS NOT NULL;
