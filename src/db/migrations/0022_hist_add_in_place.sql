-- kw_hist_add, cheaper in the common case: a batch's histogram (a result or a few) mostly falls
-- inside the stored one's buckets, so it is added in place over its own few buckets instead of
-- both arrays being copied bucket by bucket into a fresh one (about a third of a rollup upsert's
-- cost, measured on the embedded store). Same result in every case.
CREATE OR REPLACE FUNCTION kw_hist_add(a integer[], b integer[]) RETURNS integer[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  lo integer;
  hi integer;
  r integer[];
BEGIN
  IF a IS NULL THEN RETURN b; END IF;
  IF b IS NULL THEN RETURN a; END IF;
  lo := least(array_lower(a, 1), array_lower(b, 1));
  hi := greatest(array_upper(a, 1), array_upper(b, 1));
  IF lo = array_lower(a, 1) AND hi = array_upper(a, 1) THEN
    r := a;
  ELSE
    r := array_fill(0, ARRAY[hi - lo + 1], ARRAY[lo]);
    FOR i IN array_lower(a, 1)..array_upper(a, 1) LOOP r[i] := a[i]; END LOOP;
  END IF;
  FOR i IN array_lower(b, 1)..array_upper(b, 1) LOOP r[i] := r[i] + b[i]; END LOOP;
  RETURN r;
END
$$;
