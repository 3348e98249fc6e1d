-- The scheduler's poll reads the monitors deleted since its last one (src/scheduler/monitors.ts
-- `deletedSince`): a hard delete leaves no row whose `updated_at` it could see, so without this a
-- deleted monitor ran until the next full reload (up to a minute). The table holds a day of ids.
CREATE INDEX deleted_targets_deleted_at_idx ON deleted_targets (deleted_at);
