-- _doctor_tasks: the successful map and reduce attempts of each job with the figures the heuristics grade.
-- requires: data_skew, _attempt_counters
--
-- One row per task (its successful attempt, as data_skew.sql picks it).
--
-- Output columns
--   job_id, task_id, attempt_id, task_type, dur_ms
--   input_bytes, output_records     as data_skew.sql defines them (maps: split bytes; reduces: shuffle bytes)
--   cpu_ms, gc_ms                   CPU_MILLISECONDS, GC_TIME_MILLIS
--   spilled_records, map_output_records, map_output_bytes
--   physical_memory_bytes           PHYSICAL_MEMORY_BYTES (the attempt's, else its task's)

CREATE OR REPLACE TEMP VIEW _doctor_tasks AS
WITH _memory AS (
    SELECT job_id, CASE WHEN scope = 'attempt' THEN attempt_id ELSE task_id END AS key, scope,
        max(value) AS physical_memory_bytes
    FROM counters
    WHERE counter_name = 'PHYSICAL_MEMORY_BYTES' AND scope IN ('attempt', 'task')
    GROUP BY ALL
)
SELECT
    d.job_id, d.task_id, d.attempt_id, d.task_type, d.dur_ms, d.input_bytes, d.output_records,
    c.cpu_ms, c.gc_ms, c.spilled_records, c.map_output_records, c.map_output_bytes,
    coalesce(ma.physical_memory_bytes, mt.physical_memory_bytes) AS physical_memory_bytes
FROM data_skew AS d
LEFT JOIN _attempt_counters AS c ON c.job_id = d.job_id AND c.attempt_id = d.attempt_id
LEFT JOIN _memory AS ma ON ma.job_id = d.job_id AND ma.scope = 'attempt' AND ma.key = d.attempt_id
LEFT JOIN _memory AS mt ON mt.job_id = d.job_id AND mt.scope = 'task' AND mt.key = d.task_id;
