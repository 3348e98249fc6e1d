-- Result ids are UUIDv7 like every other id the API shows (CONTRACT.md, "Ids"): minted by the
-- writer, so a result's id is known before its batch is written and time-orders like checked_at.
ALTER TABLE check_results DROP COLUMN id;
ALTER TABLE check_results ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE check_results ALTER COLUMN id DROP DEFAULT;
ALTER TABLE check_results ADD PRIMARY KEY (id);
-- Dropping the column dropped the index that ended with it.
CREATE INDEX check_results_by_target ON check_results (target_id, checked_at DESC, id DESC);
