-- counter_totals: per job and task type, counters summed over the successful attempts.
-- requires: _attempt_counters
--
-- Sums over the counters of each task's successful attempt (task-scope counters
-- are credited to it), so a job whose history has no job-level totals still
-- gets them, and map-side totals are kept apart from reduce-side ones (the
-- combiner runs on both sides).  A sum is NULL when no attempt reported it.
--
-- Output columns
--   job_id, task_type ('MAP' or 'REDUCE'), tasks (successful attempts counted)
--   and the sum of every counter column of _attempt_counters, same names.

CREATE OR REPLACE TEMP VIEW counter_totals AS
SELECT
    a.job_id,
    a.task_type,
    count(*) AS tasks,
    sum(c.map_input_records) AS map_input_records,
    sum(c.file_input_bytes) AS file_input_bytes,
    sum(c.map_output_records) AS map_output_records,
    sum(c.map_output_bytes) AS map_output_bytes,
    sum(c.map_output_materialized_bytes) AS map_output_materialized_bytes,
    sum(c.spilled_records) AS spilled_records,
    sum(c.combine_input_records) AS combine_input_records,
    sum(c.combine_output_records) AS combine_output_records,
    sum(c.reduce_input_groups) AS reduce_input_groups,
    sum(c.reduce_input_records) AS reduce_input_records,
    sum(c.reduce_output_records) AS reduce_output_records,
    sum(c.reduce_shuffle_bytes) AS reduce_shuffle_bytes,
    sum(c.file_output_bytes) AS file_output_bytes,
    sum(c.hdfs_bytes_read) AS hdfs_bytes_read,
    sum(c.hdfs_bytes_written) AS hdfs_bytes_written,
    sum(c.file_bytes_read) AS file_bytes_read,
    sum(c.file_bytes_written) AS file_bytes_written,
    sum(c.split_raw_bytes) AS split_raw_bytes,
    sum(c.cpu_ms) AS cpu_ms,
    sum(c.gc_ms) AS gc_ms
FROM attempts AS a
LEFT JOIN _attempt_counters AS c ON c.job_id = a.job_id AND c.attempt_id = a.attempt_id
WHERE a.status = 'SUCCEEDED' AND a.task_type IN ('MAP', 'REDUCE')
GROUP BY a.job_id, a.task_type;

SELECT * FROM counter_totals WHERE job_id = $job_id ORDER BY task_type;
