-- A result's phase timings as five columns, not a jsonb document (bench:checks): the embedded
-- store parsed each document on insert and printed it on every read, about a fifth of a result's
-- insert. The phases are a fixed set (PHASES in src/results/rollup.ts); a phase not measured is null.
ALTER TABLE check_results
  ADD COLUMN dns_ms real, ADD COLUMN connect_ms real, ADD COLUMN tls_ms real,
  ADD COLUMN first_byte_ms real, ADD COLUMN transfer_ms real;

UPDATE check_results SET
  dns_ms = (timings->>'dns')::real, connect_ms = (timings->>'connect')::real, tls_ms = (timings->>'tls')::real,
  first_byte_ms = (timings->>'first_byte')::real, transfer_ms = (timings->>'transfer')::real
 WHERE timings IS NOT NULL;

ALTER TABLE check_results DROP COLUMN timings;
