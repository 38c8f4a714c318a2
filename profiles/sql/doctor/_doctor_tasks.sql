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
--   physical_memory_bytes           PHYSICAL_MEMORY_BYTES (as _attempt_counters credits it)
--
-- _role(task_type): 'mapper' or 'reducer', as the per-task-type heuristics name the tasks.

CREATE OR REPLACE TEMP VIEW _doctor_tasks AS
SELECT
    d.job_id, d.task_id, d.attempt_id, d.task_type, d.dur_ms, d.input_bytes, d.output_records,
    c.cpu_ms, c.gc_ms, c.spilled_records, c.map_output_records, c.map_output_bytes, c.physical_memory_bytes
FROM data_skew AS d
LEFT JOIN _attempt_counters AS c ON c.job_id = d.job_id AND c.attempt_id = d.attempt_id;

CREATE OR REPLACE TEMP MACRO _role(task_type) AS
    CASE task_type WHEN 'MAP' THEN 'mapper' WHEN 'REDUCE' THEN 'reducer' END;
