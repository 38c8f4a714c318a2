-- _map_spills: the spills of each successful map attempt, counted in its task log, and its sort settings.
-- requires: job_conf
--
-- A spill is a 'spill_finish' event of attempt_events (MapTask's "Finished spill N"); attempts
-- without a task log have no row.  The sort buffer and factor are the job's configuration
-- (2.x names, else 0.20 names; Hadoop's defaults 100 MB and 10 where unset).
--
-- Output columns
--   job_id, attempt_id, spills
--   io_sort_mb, sort_factor     the job's settings
--   merge_passes                the map-side merge's passes before the final one: with n spills and
--                               factor f, ceil((n - 1) / (f - 1)) merges of at most f runs, the last of
--                               which writes the map output (Herodotou 2011, eqs. 16-18), so n <= f -> 0

CREATE OR REPLACE TEMP VIEW _map_spills AS
WITH _maps AS (
    -- the successful maps, one row each (an attempt stored from several files counts once); joined, not
    -- semi-joined, so that a one-job query reads that job's attempts only
    SELECT DISTINCT job_id, attempt_id FROM attempts WHERE task_type = 'MAP' AND status = 'SUCCEEDED'
),
_s AS (
    SELECT e.job_id, e.attempt_id, count(*) AS spills
    FROM attempt_events AS e
    JOIN _maps AS a ON a.job_id = e.job_id AND a.attempt_id = e.attempt_id
    WHERE e.kind = 'spill_finish'
    GROUP BY e.job_id, e.attempt_id
),
_c AS (
    SELECT job_id,
        coalesce(max(TRY_CAST(value AS DOUBLE)) FILTER (WHERE key = 'mapreduce.task.io.sort.mb'),
                 max(TRY_CAST(value AS DOUBLE)) FILTER (WHERE key = 'io.sort.mb'), 100) AS io_sort_mb,
        coalesce(max(TRY_CAST(value AS INTEGER)) FILTER (WHERE key = 'mapreduce.task.io.sort.factor'),
                 max(TRY_CAST(value AS INTEGER)) FILTER (WHERE key = 'io.sort.factor'), 10) AS sort_factor
    FROM job_conf
    WHERE key IN ('mapreduce.task.io.sort.mb', 'io.sort.mb', 'mapreduce.task.io.sort.factor', 'io.sort.factor')
    GROUP BY job_id
)
SELECT s.job_id, s.attempt_id, s.spills,
    coalesce(c.io_sort_mb, 100) AS io_sort_mb, coalesce(c.sort_factor, 10) AS sort_factor,
    CASE WHEN s.spills <= 1 THEN 0
         ELSE greatest(CAST(ceil((s.spills - 1) / greatest(coalesce(c.sort_factor, 10) - 1, 1)) AS INTEGER) - 1, 0)
    END AS merge_passes
FROM _s AS s
LEFT JOIN _c AS c ON c.job_id = s.job_id;
