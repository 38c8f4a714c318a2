-- _attempt_counters: the counters of each attempt, one row per attempt, one column per counter.
--
-- An attempt's own counters (attempt scope: .jhist *AttemptFinished) are used when it
-- has any; otherwise the task-scope counters (.jhist TaskFinished, 0.20 Task lines)
-- are credited to the task's successful attempt.  Counters are pivoted per attempt
-- (attempt scope) or per task (task scope) before the task rows meet the attempts:
-- the pivot shrinks the rows a join sees about twenty-fold.  Counter
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
--   physical_memory_bytes               PHYSICAL_MEMORY_BYTES (the task's peak resident memory)

CREATE OR REPLACE TEMP VIEW _attempt_counters AS
WITH _wanted AS (
    SELECT * FROM counters
    WHERE scope IN ('attempt', 'task') AND counter_name IN (
        'MAP_INPUT_RECORDS', 'BYTES_READ', 'MAP_INPUT_BYTES', 'MAP_OUTPUT_RECORDS',
        'MAP_OUTPUT_BYTES', 'MAP_OUTPUT_MATERIALIZED_BYTES', 'SPILLED_RECORDS', 'COMBINE_INPUT_RECORDS',
        'COMBINE_OUTPUT_RECORDS', 'REDUCE_INPUT_GROUPS', 'REDUCE_INPUT_RECORDS', 'REDUCE_OUTPUT_RECORDS',
        'REDUCE_SHUFFLE_BYTES', 'BYTES_WRITTEN', 'HDFS_BYTES_READ', 'HDFS_BYTES_WRITTEN',
        'FILE_BYTES_READ', 'FILE_BYTES_WRITTEN', 'SPLIT_RAW_BYTES', 'CPU_MILLISECONDS',
        'GC_TIME_MILLIS', 'PHYSICAL_MEMORY_BYTES'
    )
),
_pivot AS (
    -- one row per attempt (attempt scope) or per task (task scope)
    SELECT
    job_id,
    scope,
    CASE WHEN scope = 'attempt' THEN attempt_id ELSE task_id END AS key,
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
    max(value) FILTER (WHERE counter_name = 'BYTES_WRITTEN' AND group_name LIKE '%FileOutputFormat%') AS file_output_bytes,
    max(value) FILTER (WHERE counter_name = 'HDFS_BYTES_READ') AS hdfs_bytes_read,
    max(value) FILTER (WHERE counter_name = 'HDFS_BYTES_WRITTEN') AS hdfs_bytes_written,
    max(value) FILTER (WHERE counter_name = 'FILE_BYTES_READ') AS file_bytes_read,
    max(value) FILTER (WHERE counter_name = 'FILE_BYTES_WRITTEN') AS file_bytes_written,
    max(value) FILTER (WHERE counter_name = 'SPLIT_RAW_BYTES') AS split_raw_bytes,
    max(value) FILTER (WHERE counter_name = 'CPU_MILLISECONDS') AS cpu_ms,
    max(value) FILTER (WHERE counter_name = 'GC_TIME_MILLIS') AS gc_ms,
    max(value) FILTER (WHERE counter_name = 'PHYSICAL_MEMORY_BYTES') AS physical_memory_bytes
    FROM _wanted
    WHERE scope = 'task' OR attempt_id IS NOT NULL
    GROUP BY job_id, scope, key
),
_succeeded AS (
    -- the successful attempt of each task (the last to finish, should there be two; as data_skew.sql)
    SELECT job_id, task_id, first(attempt_id ORDER BY finish_ms DESC NULLS LAST, attempt_id DESC) AS attempt_id
    FROM attempts
    WHERE status = 'SUCCEEDED'
    GROUP BY job_id, task_id
),
_credited AS (
    -- attempt rows as they are; task rows credited to the task's successful attempt (none: dropped)
    SELECT
        p.job_id,
        CASE WHEN p.scope = 'attempt' THEN p.key ELSE s.attempt_id END AS attempt_id,
        p.scope = 'attempt' AS own,
        p.* EXCLUDE (job_id, scope, key)
    FROM _pivot AS p
    LEFT JOIN _succeeded AS s ON p.scope = 'task' AND s.job_id = p.job_id AND s.task_id = p.key
)
-- an attempt's own counters win over its task's; the pivot is read once and the window is
-- partitioned by job, so a one-job query reads that job's counters only
SELECT * EXCLUDE (own) FROM _credited
WHERE attempt_id IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY job_id, attempt_id ORDER BY own DESC) = 1;

SELECT * FROM _attempt_counters WHERE job_id = $job_id ORDER BY attempt_id;
