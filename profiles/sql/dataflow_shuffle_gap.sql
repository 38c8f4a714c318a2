-- The gap between the end of the last map and the end of the shuffle (HiTune,
-- Dai et al. 2011, Figure 16 / section 7.2): ideally every reduce's shuffle ends as
-- soon as the last map ends; a large gap means the copiers wait on something else.
-- Map end: the latest end of a 'map' vertex instance; a reduce's shuffle end: the
-- latest end of its 'shuffle', 'copier' or merge instances.
-- Instances: one source per job, never both added together: the reconstructed ones
--   (source 'reconstruct', `phaseline dataflow`) when the job has them, else HiTune's
--   own (source 'hitune_csv', from its CSV reports).
-- Parameters: $job_id.
-- Output columns: attempt_id (one row per reduce), last_map_end_ms, shuffle_end_ms,
--   gap_ms (shuffle_end_ms - last_map_end_ms), job_span_ms (first instance start to
--   last instance end), gap_pct (of job_span_ms)
WITH vi AS (  -- one source of instances per job (dataflow_job_instances.sql)
    SELECT * FROM _job_instances($job_id)
),
maps AS (SELECT max(end_ms) AS last_map_end_ms FROM vi WHERE vertex = 'map'),
job AS (SELECT max(end_ms) - min(start_ms) AS job_span_ms FROM vi),
shuffles AS (
    SELECT attempt_id, max(end_ms) AS shuffle_end_ms
    FROM vi WHERE vertex IN ('shuffle', 'copier', 'merge', 'inmem_merge', 'ondisk_merge')
    GROUP BY attempt_id
)
SELECT s.attempt_id, m.last_map_end_ms, s.shuffle_end_ms,
       s.shuffle_end_ms - m.last_map_end_ms AS gap_ms, j.job_span_ms,
       round(100.0 * (s.shuffle_end_ms - m.last_map_end_ms) / nullif(j.job_span_ms, 0), 2) AS gap_pct
FROM shuffles s CROSS JOIN maps m CROSS JOIN job j
ORDER BY s.attempt_id
