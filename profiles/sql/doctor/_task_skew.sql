-- _task_skew: Dr. Elephant's Mapper and Reducer Skew for one task type, as a table macro
-- (mapper_skew and reducer_skew select from it).
-- requires: _severity, _job_filter, _skew, job_summary
--
-- _task_skew(kind, job, deviation_limits, count_limits, file_limits, default_block_bytes): kind is
-- 'MAP' (input split bytes) or 'REDUCE' (shuffle bytes).  Output columns: those of mapper_skew.

CREATE OR REPLACE TEMP MACRO _task_skew(kind, job, deviation_limits, count_limits, file_limits, default_block_bytes) AS TABLE
WITH _m AS (
    SELECT j.job_id, s.tasks, s.small_tasks, s.large_tasks, s.small_mean_bytes, s.large_mean_bytes, s.deviation,
        s.block_bytes
    FROM job_summary AS j
    LEFT JOIN _skew AS s ON s.job_id = j.job_id AND s.task_type = kind
)
SELECT
    job_id,
    CASE WHEN deviation IS NOT NULL THEN
        least(_sev_asc(deviation, deviation_limits), _sev_asc(tasks, count_limits),
              _sev_asc(large_mean_bytes / coalesce(block_bytes, default_block_bytes), file_limits)) END AS level,
    _sev_name(level) AS severity,
    deviation AS value,
    'deviation >= ' || _limits(deviation_limits) AS threshold,
    printf('%d %ss: %d average %.1f MB, %d average %.1f MB (%.1fx)', tasks, _role(kind), large_tasks,
           large_mean_bytes / 1e6, small_tasks, small_mean_bytes / 1e6, deviation) AS detail,
    CASE kind WHEN 'MAP' THEN 'even out the input (split) bytes: the split size (mapreduce.input.fileinputformat.split.maxsize), or an input of evenly sized files'
         ELSE 'even out the shuffle bytes: the spread of the keys over the partitions (a better hash or salt on the hot keys), or more reduces' END AS recommendation,
    CASE WHEN tasks IS NULL THEN 'no successful ' || _role(kind) || ' with a known input size (no counters)'
         WHEN deviation IS NULL THEN printf('%d %s(s) of one size: nothing to compare', tasks, _role(kind)) END AS skipped
FROM _m
WHERE _for_job(job_id, job);
