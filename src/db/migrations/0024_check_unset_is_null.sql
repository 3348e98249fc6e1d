-- Optional check fields a client left out are now stored as null (and `expected_status` as its
-- default range), as the schema fills them on every write: a monitor reads the same whether its
-- client sent `null` or nothing. This fills the monitors written before. Stored values win (`||`).
UPDATE targets SET check_spec = jsonb_build_object(
    'expected_status', jsonb_build_object('kind', 'range', 'value', jsonb_build_object('min', 200, 'max', 399)),
    'expected_body_contains', null, 'body', null, 'basic_auth', null, 'bearer_token', null) || check_spec
  WHERE kind = 'http';
UPDATE targets SET check_spec = jsonb_build_object('resolver', null, 'expected_contains', null, 'expected_records', null) || check_spec
  WHERE kind = 'dns';
UPDATE targets SET check_spec = jsonb_build_object('max_runtime', null) || check_spec WHERE kind = 'heartbeat';
UPDATE targets SET check_spec = jsonb_build_object('server_name', null) || check_spec WHERE kind = 'tls_cert';
UPDATE targets SET check_spec = jsonb_set(check_spec, '{steps}', (
    SELECT coalesce(jsonb_agg(CASE WHEN s->>'op' = 'assert_text' THEN jsonb_build_object('selector', null) || s ELSE s END ORDER BY i), '[]'::jsonb)
      FROM jsonb_array_elements(check_spec->'steps') WITH ORDINALITY AS e(s, i)))
  WHERE kind = 'flow';
