-- Scheduling across nodes (src/scheduler/). Monitors are split into 64 shards by the random tail
-- of their UUIDv7 id; each node leases shards and schedules their monitors in memory, so a check
-- costs no store write to hand out. Leases are judged on the store's clock (nodes' clocks may
-- differ); a node that stops renewing loses its shards after the lease TTL.

CREATE TABLE scheduler_nodes (
  node_id uuid PRIMARY KEY,
  seen_at timestamptz NOT NULL
);

CREATE TABLE scheduler_leases (
  shard smallint PRIMARY KEY,
  node_id uuid,
  lease_until timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO scheduler_leases (shard) SELECT generate_series(0, 63);

-- Nodes poll for monitors changed since they last looked.
CREATE INDEX targets_updated_at_idx ON targets (updated_at);
