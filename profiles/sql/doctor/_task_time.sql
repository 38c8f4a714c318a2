-- _task_time: Dr. Elephant's Mapper and Reducer Time for one task type, as a table macro
-- (mapper_time and reducer_time select from it).
-- requires: _severity, _job_filter, _doctor_tasks, job_summary
--
-- _task_time(kind, job, short_limits, long_limits, count_limits): kind is 'MAP' or 'REDUCE'.
-- Output columns: those of mapper_time.

CREATE OR REPLACE TEMP MACRO _task_time(kind, job, short_limits, long_limits, count_limits) AS TABLE
WITH _t AS (
    SELECT job_id, count(*) AS tasks, avg(dur_ms) AS mean_ms, min(dur_ms) AS min_ms, max(dur_ms) AS max_ms
    FROM _doctor_tasks
    WHERE task_type = kind AND dur_ms IS NOT NULL
    GROUP BY job_id
),
_m AS (
    SELECT j.job_id, t.tasks, t.mean_ms, t.min_ms, t.max_ms
    FROM job_summary AS j
    LEFT JOIN _t AS t ON t.job_id = j.job_id
)
SELECT
    job_id,
    least(_sev_desc(mean_ms / 60000, short_limits), _sev_asc(tasks, count_limits)) AS short_level,
    _sev_asc(mean_ms / 60000, long_limits) AS long_level,
    greatest(short_level, long_level) AS level,
    _sev_name(level) AS severity,
    mean_ms / 1000 AS value,
    short_level > long_level AS too_short,
    CASE WHEN too_short THEN 'mean <= ' || _limits(short_limits) || ' min with >= ' || _limits(count_limits) || ' tasks'
         ELSE 'mean >= ' || _limits(long_limits) || ' min' END AS threshold,
    printf('%d %ss: mean %.1f s (min %.1f s, max %.1f s)', tasks, _role(kind), mean_ms / 1000, min_ms / 1000,
           max_ms / 1000) AS detail,
    CASE WHEN level = 0 THEN 'none needed'
         WHEN too_short AND kind = 'MAP' THEN 'fewer, larger maps: raise the split size (mapreduce.input.fileinputformat.split.minsize) or combine small files'
         WHEN kind = 'MAP' THEN 'more, smaller maps: lower the split size (mapreduce.input.fileinputformat.split.maxsize)'
         WHEN too_short THEN 'fewer reduces (mapreduce.job.reduces): each one starts a JVM and writes a file'
         ELSE 'more reduces (mapreduce.job.reduces), so each takes a smaller share of the shuffle' END AS recommendation,
    CASE WHEN tasks IS NULL THEN 'no successful ' || _role(kind) || ' with a start and a finish time' END AS skipped
FROM _m
WHERE _for_job(job_id, job);
