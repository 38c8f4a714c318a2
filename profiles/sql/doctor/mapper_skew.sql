-- mapper_skew: mappers whose input (split) bytes fall into two unequal groups (Dr. Elephant's Mapper Skew).
-- requires: _severity, _skew, job_summary
--
-- Dr. Elephant (app/com/linkedin/drelephant/mapreduce/heuristics/GenericDataSkewHeuristic.java,
-- app-conf/HeuristicConf.xml) grades the deviation between the two groups (2, 4, 8, 16), caps it by
-- the number of tasks (10, 50, 100, 200: a few tasks cannot waste much) and by the larger group's
-- mean against the block size (1/8, 1/4, 1/2, 1 of it: small tasks cannot either).
--
-- Output columns
--   job_id, level (0 None .. 4 Critical, NULL when skipped), severity
--   value            the deviation: the large group's mean input (split) bytes over the small group's
--   threshold        the deviation limits
--   detail, recommendation
--   skipped          why the job's data cannot support the heuristic (NULL when graded)
-- Parameters: $job_id, $deviation, $num_tasks, $files (fractions of $block_bytes, the default block size)

CREATE OR REPLACE TEMP VIEW doctor_mapper_skew AS
SELECT j.job_id, s.tasks, s.small_tasks, s.large_tasks, s.small_mean_bytes, s.large_mean_bytes, s.deviation,
    s.block_bytes
FROM job_summary AS j
LEFT JOIN _skew AS s ON s.job_id = j.job_id AND s.task_type = 'MAP';

SELECT
    job_id,
    CASE WHEN deviation IS NOT NULL THEN
        least(_sev_asc(deviation, $deviation), _sev_asc(tasks, $num_tasks),
              _sev_asc(large_mean_bytes / coalesce(block_bytes, $block_bytes), $files)) END AS level,
    _sev_name(level) AS severity,
    deviation AS value,
    'deviation >= ' || _limits($deviation) AS threshold,
    printf('%d mappers: %d average %.1f MB, %d average %.1f MB (%.1fx)', tasks, large_tasks,
           large_mean_bytes / 1e6, small_tasks, small_mean_bytes / 1e6, deviation) AS detail,
    'even out the input (split) bytes: the split size (mapreduce.input.fileinputformat.split.maxsize), or an input of evenly sized files' AS recommendation,
    CASE WHEN tasks IS NULL THEN 'no successful mapper with a known input size (no counters)'
         WHEN deviation IS NULL THEN printf('%d mapper(s) of one size: nothing to compare', tasks) END AS skipped
FROM doctor_mapper_skew
WHERE job_id = $job_id;
