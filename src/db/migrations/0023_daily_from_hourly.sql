-- Daily rollups derived from the hourly ones: the result writer now writes only hourly rows, and
-- the history sweep moves hourly rows past 35 days into their UTC day's row (kw_hist_sum adds their
-- histograms). A daily read takes both kinds of row, so every stretch must sit in exactly one.
CREATE AGGREGATE kw_hist_sum(integer[]) (SFUNC = kw_hist_add, STYPE = integer[]);

-- Until now every result went into both its hour and its day. A day that began inside the last 35
-- days still has all its hours (the sweep only removed older ones): its daily row goes. An older
-- day's daily row holds its hours, swept or not: whatever hourly rows it still has go.
DELETE FROM result_rollups WHERE granularity = 'day' AND bucket_start >= now() - interval '35 days';
DELETE FROM result_rollups h
 WHERE h.granularity = 'hour'
   AND date_bin('1 day', h.bucket_start, TIMESTAMPTZ '1970-01-01 00:00:00+00') < now() - interval '35 days'
   AND EXISTS (SELECT 1 FROM result_rollups d
                WHERE d.target_id = h.target_id AND d.region = h.region AND d.granularity = 'day'
                  AND d.bucket_start = date_bin('1 day', h.bucket_start, TIMESTAMPTZ '1970-01-01 00:00:00+00'));
