-- Every successful job of the store with what the backtest needs to compare runs.
-- requires: job_summary (profiles/sql: its task_span_ms, ARIA's completion time, defined once)
--
-- Output columns:
--   job_id        the job
--   name          its name (runs of one job share it)
--   maps          map tasks
--   reduces       reduce tasks
--   input_bytes   FileInputFormat BYTES_READ (job total; the group is FileInputFormatCounter in
--                 2.x/3.x, FileInputFormat$Counter in 1.x: both match), else 0.20's MAP_INPUT_BYTES
--                 (as profiles/sql/_attempt_counters.sql reads each map's), NULL where neither is counted
--   span_ms       ARIA's completion time: job_summary's task_span_ms (first successful task attempt
--                 start -> last one's finish)
--   map_selectivity  MAP_OUTPUT_BYTES / input_bytes (job totals), NULL where not counted
--   submit_ms     submission time (orders runs)
--   map_slots     mapreduce.local.map.tasks.maximum (LocalJobRunner), NULL elsewhere
--   reduce_slots  mapreduce.local.reduce.tasks.maximum (LocalJobRunner), NULL elsewhere
WITH _input AS (
    SELECT job_id,
           coalesce(
               max(value) FILTER (WHERE counter_name = 'BYTES_READ' AND group_name LIKE '%FileInputFormat%'),
               max(value) FILTER (WHERE counter_name = 'MAP_INPUT_BYTES')
           ) AS input_bytes,
           max(value) FILTER (WHERE counter_name = 'MAP_OUTPUT_BYTES') AS map_output_bytes
    FROM counters
    WHERE scope = 'job_total' AND counter_name IN ('BYTES_READ', 'MAP_INPUT_BYTES', 'MAP_OUTPUT_BYTES')
    GROUP BY job_id
),
_slots AS (
    SELECT job_id,
           max(CASE WHEN key = 'mapreduce.local.map.tasks.maximum' THEN value END) AS map_slots,
           max(CASE WHEN key = 'mapreduce.local.reduce.tasks.maximum' THEN value END) AS reduce_slots
    FROM conf
    GROUP BY job_id
)
SELECT j.job_id, j.name, j.total_maps AS maps, j.total_reduces AS reduces, i.input_bytes,
       i.map_output_bytes / nullif(i.input_bytes, 0) AS map_selectivity,
       s.task_span_ms AS span_ms, j.submit_ms,
       TRY_CAST(c.map_slots AS INTEGER) AS map_slots, TRY_CAST(c.reduce_slots AS INTEGER) AS reduce_slots
FROM jobs j
JOIN job_summary s USING (job_id)
LEFT JOIN _input i USING (job_id)
LEFT JOIN _slots c USING (job_id)
WHERE j.status = 'SUCCEEDED' AND j.name IS NOT NULL
ORDER BY j.name, i.input_bytes, j.submit_ms
