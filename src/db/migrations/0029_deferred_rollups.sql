-- Rollups are folded after the results, not in their transaction (src/results/rollup-folder.ts):
-- a cursor row now exists from a monitor-region's first result, so every result not yet folded is
-- found through one, and a row with no `checked_at` is a monitor-region with nothing folded yet.
ALTER TABLE result_cursors ALTER COLUMN checked_at DROP NOT NULL, ALTER COLUMN status DROP NOT NULL;
