-- mapper_time: mappers too short for their number, or too long (Dr. Elephant's Mapper Time).
-- requires: _severity, _doctor_tasks, job_summary
--
-- Dr. Elephant (MapperTimeHeuristic.java, HeuristicConf.xml): short tasks are graded by their mean
-- runtime (10, 4, 2, 1 minutes: the shorter, the worse) capped by their number (50, 101, 500, 1000:
-- a few short tasks are harmless); long tasks by the mean runtime alone (15, 30, 60, 120 minutes).
-- The worse of the two is the finding.
--
-- Output columns
--   job_id, level, severity, value (the mean runtime in seconds), threshold, detail, recommendation,
--   skipped; too_short (whether the short-task grade is the finding's)
-- Parameters: $job_id, $short_runtime_min, $long_runtime_min, $num_tasks

CREATE OR REPLACE TEMP VIEW doctor_mapper_time AS
WITH _t AS (
    SELECT job_id, count(*) AS tasks, avg(dur_ms) AS mean_ms, min(dur_ms) AS min_ms, max(dur_ms) AS max_ms
    FROM _doctor_tasks
    WHERE task_type = 'MAP' AND dur_ms IS NOT NULL
    GROUP BY job_id
)
SELECT j.job_id, t.tasks, t.mean_ms, t.min_ms, t.max_ms
FROM job_summary AS j
LEFT JOIN _t AS t ON t.job_id = j.job_id;

SELECT
    job_id,
    least(_sev_desc(mean_ms / 60000, $short_runtime_min), _sev_asc(tasks, $num_tasks)) AS short_level,
    _sev_asc(mean_ms / 60000, $long_runtime_min) AS long_level,
    greatest(short_level, long_level) AS level,
    _sev_name(level) AS severity,
    mean_ms / 1000 AS value,
    short_level > long_level AS too_short,
    CASE WHEN too_short THEN 'mean <= ' || _limits($short_runtime_min) || ' min with >= ' || _limits($num_tasks) || ' tasks'
         ELSE 'mean >= ' || _limits($long_runtime_min) || ' min' END AS threshold,
    printf('%d mappers: mean %.1f s (min %.1f s, max %.1f s)', tasks, mean_ms / 1000, min_ms / 1000,
           max_ms / 1000) AS detail,
    CASE WHEN level = 0 THEN 'none needed'
         WHEN too_short THEN 'fewer, larger maps: raise the split size (mapreduce.input.fileinputformat.split.minsize) or combine small files'
         ELSE 'more, smaller maps: lower the split size (mapreduce.input.fileinputformat.split.maxsize)' END AS recommendation,
    CASE WHEN tasks IS NULL THEN 'no successful mapper with a start and a finish time' END AS skipped
FROM doctor_mapper_time
WHERE job_id = $job_id;
