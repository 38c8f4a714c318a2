-- _attempt_counters: the counters of each attempt, one row per attempt, one column per counter.
--
-- Attempt-scope counters win; task-scope counters (what .jhist TaskFinished and
-- 0.20 Task lines carry) are credited to the task's successful attempt.  Counter
-- names are the store's (2.x names; ingest maps 0.20/1.x group names).  NULL where
-- the source has no such counter (killed attempts carry none).
--
-- Output columns
--   job_id, attempt_id                  the attempt
--   map_input_records                   TaskCounter MAP_INPUT_RECORDS
--   file_input_bytes                    FileInputFormatCounter BYTES_READ, else 0.20 MAP_INPUT_BYTES
--   map_output_records, map_output_bytes, map_output_materialized_bytes
--   spilled_records, combine_input_records, combine_output_records
--   reduce_input_groups, reduce_input_records, reduce_output_records, reduce_shuffle_bytes
--   file_output_bytes                   FileOutputFormatCounter BYTES_WRITTEN
--   hdfs_bytes_read, hdfs_bytes_written, file_bytes_read, file_bytes_written
--   split_raw_bytes, cpu_ms (CPU_MILLISECONDS), gc_ms (GC_TIME_MILLIS)

CREATE OR REPLACE TEMP VIEW _attempt_counters AS
WITH _succeeded AS (
    SELECT job_id, task_id, attempt_id
    FROM attempts
    WHERE status = 'SUCCEEDED'
    QUALIFY row_number() OVER (PARTITION BY job_id, task_id ORDER BY finish_ms DESC, attempt_id) = 1
),
_scoped AS (
    SELECT job_id, attempt_id, group_name, counter_name, value, 1 AS prio
    FROM counters
    WHERE scope = 'attempt' AND attempt_id IS NOT NULL
    UNION ALL
    SELECT c.job_id, s.attempt_id, c.group_name, c.counter_name, c.value, 2 AS prio
    FROM counters AS c
    JOIN _succeeded AS s ON s.job_id = c.job_id AND s.task_id = c.task_id
    WHERE c.scope = 'task'
),
_best AS (
    SELECT job_id, attempt_id, group_name, counter_name, arg_min(value, prio) AS value
    FROM _scoped
    GROUP BY ALL
)
SELECT
    job_id,
    attempt_id,
    max(value) FILTER (WHERE counter_name = 'MAP_INPUT_RECORDS') AS map_input_records,
    coalesce(
        max(value) FILTER (WHERE counter_name = 'BYTES_READ' AND group_name LIKE '%FileInputFormat%'),
        max(value) FILTER (WHERE counter_name = 'MAP_INPUT_BYTES')
    ) AS file_input_bytes,
    max(value) FILTER (WHERE counter_name = 'MAP_OUTPUT_RECORDS') AS map_output_records,
    max(value) FILTER (WHERE counter_name = 'MAP_OUTPUT_BYTES') AS map_output_bytes,
    max(value) FILTER (WHERE counter_name = 'MAP_OUTPUT_MATERIALIZED_BYTES') AS map_output_materialized_bytes,
    max(value) FILTER (WHERE counter_name = 'SPILLED_RECORDS') AS spilled_records,
    max(value) FILTER (WHERE counter_name = 'COMBINE_INPUT_RECORDS') AS combine_input_records,
    max(value) FILTER (WHERE counter_name = 'COMBINE_OUTPUT_RECORDS') AS combine_output_records,
    max(value) FILTER (WHERE counter_name = 'REDUCE_INPUT_GROUPS') AS reduce_input_groups,
    max(value) FILTER (WHERE counter_name = 'REDUCE_INPUT_RECORDS') AS reduce_input_records,
    max(value) FILTER (WHERE counter_name = 'REDUCE_OUTPUT_RECORDS') AS reduce_output_records,
    max(value) FILTER (WHERE counter_name = 'REDUCE_SHUFFLE_BYTES') AS reduce_shuffle_bytes,
    max(value) FILTER (
        WHERE counter_name = 'BYTES_WRITTEN' AND group_name LIKE '%FileOutputFormat%'
    ) AS file_output_bytes,
    max(value) FILTER (WHERE counter_name = 'HDFS_BYTES_READ') AS hdfs_bytes_read,
    max(value) FILTER (WHERE counter_name = 'HDFS_BYTES_WRITTEN') AS hdfs_bytes_written,
    max(value) FILTER (WHERE counter_name = 'FILE_BYTES_READ') AS file_bytes_read,
    max(value) FILTER (WHERE counter_name = 'FILE_BYTES_WRITTEN') AS file_bytes_written,
    max(value) FILTER (WHERE counter_name = 'SPLIT_RAW_BYTES') AS split_raw_bytes,
    max(value) FILTER (WHERE counter_name = 'CPU_MILLISECONDS') AS cpu_ms,
    max(value) FILTER (WHERE counter_name = 'GC_TIME_MILLIS') AS gc_ms
FROM _best
GROUP BY job_id, attempt_id;

SELECT * FROM _attempt_counters WHERE job_id = $job_id ORDER BY attempt_id;
