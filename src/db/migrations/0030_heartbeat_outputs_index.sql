-- The hourly sweep clears run output older than 7 days from the ping log, which keeps pings for
-- 30. It found them through the log's time index, so each run read every ping between 7 and 30
-- days old (23 days of every heartbeat's pings) to pick out the few still holding output. Only
-- pings holding output are indexed here: those a POST with a body gave, until the sweep clears them.
CREATE INDEX heartbeat_pings_with_output ON heartbeat_pings (received_at) WHERE output IS NOT NULL;
