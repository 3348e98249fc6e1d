-- The ping ingest saves a routine ping by compare-and-set on the heartbeat row's version (`xmin`)
-- alone, without joining the monitor and org on every ping to see that they still count its pings
-- with the same timing (bench:pings: the join was about an eighth of the ingest's cost). Instead,
-- whatever changes that rewrites the heartbeat row in the same transaction: the monitor paused or
-- resumed, held or released, its check (period, grace, max_runtime) changed, its org deleted or
-- restored. The row is rewritten unchanged; every updated row gets a new version, so a judgement
-- read before the change no longer matches and goes through the locked path, which reads them again.
-- Monitors are locked before their heartbeats here, the order the other writers of both keep.

CREATE FUNCTION kw_heartbeat_touch_monitor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE heartbeats SET target_id = target_id WHERE target_id = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER targets_touch_heartbeat AFTER UPDATE OF enabled, held_at, check_spec ON targets
  FOR EACH ROW WHEN (NEW.kind = 'heartbeat'
    AND (OLD.enabled, OLD.held_at, OLD.check_spec) IS DISTINCT FROM (NEW.enabled, NEW.held_at, NEW.check_spec))
  EXECUTE FUNCTION kw_heartbeat_touch_monitor();

CREATE FUNCTION kw_heartbeat_touch_org() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE heartbeats SET target_id = target_id WHERE org_id = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER orgs_touch_heartbeats AFTER UPDATE OF deleted_at ON orgs
  FOR EACH ROW WHEN (OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
  EXECUTE FUNCTION kw_heartbeat_touch_org();
