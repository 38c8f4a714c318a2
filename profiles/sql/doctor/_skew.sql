-- _skew: data skew per job and task type, as Dr. Elephant's Mapper and Reducer Skew measure it.
-- requires: _doctor_tasks, job_conf
--
-- The tasks of a type are cut into two groups by their input bytes (Dr. Elephant,
-- GenericDataSkewHeuristic with Statistics.findTwoGroups: the tasks under the mean and the
-- rest), and the deviation is the larger group's mean over the smaller group's mean.
--
--   bytes  1 1 1 1 1 9 9      mean 3.3 -> small {1 1 1 1 1} mean 1, large {9 9} mean 9: deviation 9
--
-- Output columns
--   job_id, task_type
--   tasks            tasks with a known input (maps: split bytes; reduces: shuffle bytes)
--   small_tasks, large_tasks, small_mean_bytes, large_mean_bytes
--   deviation        large_mean_bytes / small_mean_bytes (NULL with one group, or a mean of 0)
--   block_bytes      dfs.blocksize (else dfs.block.size) of the job, NULL when unset

CREATE OR REPLACE TEMP VIEW _skew AS
WITH _sized AS (
    SELECT job_id, task_type, input_bytes,
        input_bytes >= avg(input_bytes) OVER (PARTITION BY job_id, task_type) AS large
    FROM _doctor_tasks
    WHERE input_bytes IS NOT NULL
),
_block AS (
    SELECT job_id, max(TRY_CAST(value AS BIGINT)) FILTER (WHERE key IN ('dfs.blocksize', 'dfs.block.size')) AS block_bytes
    FROM job_conf
    WHERE key IN ('dfs.blocksize', 'dfs.block.size')
    GROUP BY job_id
)
SELECT
    s.job_id, s.task_type,
    count(*) AS tasks,
    count(*) FILTER (WHERE NOT large) AS small_tasks,
    count(*) FILTER (WHERE large) AS large_tasks,
    avg(input_bytes) FILTER (WHERE NOT large) AS small_mean_bytes,
    avg(input_bytes) FILTER (WHERE large) AS large_mean_bytes,
    avg(input_bytes) FILTER (WHERE large) / nullif(avg(input_bytes) FILTER (WHERE NOT large), 0) AS deviation,
    any_value(b.block_bytes) AS block_bytes
FROM _sized AS s
LEFT JOIN _block AS b ON b.job_id = s.job_id
GROUP BY s.job_id, s.task_type;
