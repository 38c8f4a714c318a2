-- data_skew: per-task input and shuffle data, against the job's mean for the task type.
-- requires: _attempt_counters
--
-- One row per task with a successful attempt (its counters are the task's).
--
-- Output columns
--   job_id, task_id, attempt_id, task_type, host
--   input_bytes      maps: FileInputFormat BYTES_READ / MAP_INPUT_BYTES, else HDFS_BYTES_READ; but the
--                    split length its log names (``Processing split: <file>:<offset>+<length>``, the
--                    data_bytes of its first phase) for every LocalJobRunner map that has one: one
--                    JVM's tasks share its file-system statistics, of which the byte counter is a
--                    delta, so a map beside another counts the other's reads too (a 1,048,600-byte
--                    split read 1,626,044 bytes, by it), and a map alone its reader's look past the
--                    split's end; the split length is the same measure on one slot and on several.
--                    A cluster's map whose FileInputFormat counts 0 bytes (MultipleInputs: its split is
--                    a TaggedInputSplit to the counting reader) takes its split length too
--                    reduces: REDUCE_SHUFFLE_BYTES
--   input_records    maps: MAP_INPUT_RECORDS; reduces: REDUCE_INPUT_RECORDS
--   output_bytes     maps: MAP_OUTPUT_BYTES (map-only: bytes written); reduces: bytes written
--   output_records   MAP_OUTPUT_RECORDS / REDUCE_OUTPUT_RECORDS
--   input_bytes_ratio, input_records_ratio   the value / its mean over the job's tasks of the type
--   dur_ms           the successful attempt's duration

CREATE OR REPLACE TEMP VIEW data_skew AS
WITH _ok AS (
    -- the successful attempt of each task: the last to finish (one without a finish time counts too, a tie
    -- goes to the higher id); a window partitioned by job, so a one-job query reads that job's attempts only
    SELECT job_id, task_id, attempt_id, task_type, host,
        CASE WHEN finish_ms >= start_ms THEN finish_ms - start_ms END AS dur_ms
    FROM attempts
    WHERE status = 'SUCCEEDED' AND task_type IN ('MAP', 'REDUCE')
    QUALIFY row_number() OVER (PARTITION BY job_id, task_id ORDER BY finish_ms DESC NULLS LAST, attempt_id DESC) = 1
),
_split AS (  -- a map's split length, as its log names it: the data of its first task-thread phase
    SELECT job_id, attempt_id, arg_min(data_bytes, start_ms) AS split_bytes
    FROM attempt_phases
    WHERE task_type = 'MAP' AND lane = 'main'
    GROUP BY job_id, attempt_id
),
_sizes AS (
    SELECT
        o.*,
        CASE o.task_type
            WHEN 'MAP' THEN CASE WHEN s.split_bytes IS NOT NULL
                                      AND (o.job_id LIKE 'job\_local%' ESCAPE '\' OR c.file_input_bytes = 0)
                                 THEN s.split_bytes
                                 ELSE coalesce(c.file_input_bytes, c.hdfs_bytes_read) END
            ELSE c.reduce_shuffle_bytes END AS input_bytes,
        CASE o.task_type WHEN 'MAP' THEN c.map_input_records ELSE c.reduce_input_records END AS input_records,
        CASE o.task_type WHEN 'MAP' THEN coalesce(c.map_output_bytes, c.file_output_bytes, c.hdfs_bytes_written)
            ELSE coalesce(c.file_output_bytes, c.hdfs_bytes_written) END AS output_bytes,
        CASE o.task_type WHEN 'MAP' THEN c.map_output_records ELSE c.reduce_output_records END AS output_records
    FROM _ok AS o
    LEFT JOIN _attempt_counters AS c ON c.job_id = o.job_id AND c.attempt_id = o.attempt_id
    LEFT JOIN _split AS s ON s.job_id = o.job_id AND s.attempt_id = o.attempt_id
)
SELECT
    job_id, task_id, attempt_id, task_type, host, input_bytes, input_records, output_bytes, output_records,
    input_bytes / nullif(avg(input_bytes) OVER (PARTITION BY job_id, task_type), 0) AS input_bytes_ratio,
    input_records / nullif(avg(input_records) OVER (PARTITION BY job_id, task_type), 0) AS input_records_ratio,
    dur_ms
FROM _sizes;

SELECT * FROM data_skew WHERE job_id = $job_id ORDER BY task_type, input_bytes_ratio DESC NULLS LAST, task_id;
