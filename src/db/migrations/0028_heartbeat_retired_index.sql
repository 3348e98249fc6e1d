-- The replaced-URL index (0025) held an entry for every heartbeat, nearly all of them for an empty
-- array, and took new entries into GIN's pending list, which every search reads through until a
-- vacuum merges it: a batch of first pings on 20,000 fresh heartbeats spent 12-17 ms there on the
-- embedded store. Only heartbeats with replaced URLs are indexed now, straight into the index
-- (rotations are rare; lookups are on every ping that is not remembered).
DROP INDEX heartbeats_retired_tokens_idx;
CREATE INDEX heartbeats_retired_tokens_idx ON heartbeats USING gin (retired_token_hashes)
  WITH (fastupdate = off) WHERE cardinality(retired_token_hashes) > 0;
