-- The ping log without a foreign key (bench:pings): checking one on every logged ping cost about as
-- much as the insert itself. None is needed to keep the log sound: the ingest writes a ping only in
-- the statement or transaction that updated (so locked) its heartbeat row, which a delete waits for.
-- A heartbeat's pings go with it through this trigger instead of the cascade.
ALTER TABLE heartbeat_pings DROP CONSTRAINT heartbeat_pings_target_id_fkey;

CREATE FUNCTION kw_heartbeat_pings_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM heartbeat_pings p USING gone g WHERE p.target_id = g.target_id;
  RETURN NULL;
END $$;

CREATE TRIGGER heartbeats_take_their_pings AFTER DELETE ON heartbeats
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION kw_heartbeat_pings_follow();
