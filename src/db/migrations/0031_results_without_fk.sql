-- Check results without a foreign key (bench:checks): PostgreSQL checks one by locking the
-- monitor's row for every result inserted, a write (WAL) per result, and on the embedded store
-- about a fifth of the insert's cost. The insert already joins `targets` and drops the results of
-- monitors gone before it runs. A monitor's results go with it through this trigger instead of
-- the cascade. A batch committing beside the delete (its join saw the monitor, the trigger did not
-- see its rows) would leave results behind: each deleted id is remembered here for a day, and the
-- history sweep removes what such a batch left (src/results/retention.ts).
ALTER TABLE check_results DROP CONSTRAINT check_results_target_id_fkey;

CREATE TABLE deleted_targets (
  target_id uuid PRIMARY KEY,
  deleted_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION kw_check_results_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM check_results r USING gone g WHERE r.target_id = g.id;
  INSERT INTO deleted_targets (target_id) SELECT id FROM gone ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER targets_take_their_results AFTER DELETE ON targets
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION kw_check_results_follow();
