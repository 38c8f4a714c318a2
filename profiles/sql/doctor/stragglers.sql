-- stragglers: tasks much slower than their type's median that their data does not explain (phaseline).
-- requires: _severity, _job_filter, stragglers, data_skew, job_summary
--
-- Dr. Elephant's skew heuristics group tasks by data; a task slow on the same data as the others
-- (a slow host, a bad disk, a lock) passes them.  A straggler here is a successful attempt at
-- least $k times the median of its type whose input is at most $data_ratio times the mean of its
-- type.  Graded by the worst such ratio (1.5, 2, 3, 5 by default) with at least $min_tasks tasks of
-- the type for a median.
--
-- Output columns
--   job_id, level, severity, value (the worst straggler's time / the median), threshold, detail,
--   recommendation, skipped
-- Parameters: $job_id, $ratio, $k, $data_ratio, $min_tasks

CREATE OR REPLACE TEMP VIEW doctor_stragglers AS
WITH _typed AS (
    SELECT job_id, task_type, count(*) AS tasks FROM data_skew GROUP BY job_id, task_type
)
SELECT j.job_id, s.attempt_id, s.task_type, s.host, s.ratio, s.dur_ms, s.median_ms, d.input_bytes_ratio,
    t.tasks
FROM job_summary AS j
LEFT JOIN stragglers AS s ON s.job_id = j.job_id AND s.phase = 'attempt' AND s.status = 'SUCCEEDED'
LEFT JOIN data_skew AS d ON d.job_id = j.job_id AND d.attempt_id = s.attempt_id
LEFT JOIN _typed AS t ON t.job_id = j.job_id AND t.task_type = s.task_type;

SELECT
    job_id,
    max(ratio) FILTER (WHERE straggler) AS value,
    CASE WHEN count(ratio) > 0 THEN coalesce(_sev_asc(value, $ratio), 0) END AS level,
    _sev_name(level) AS severity,
    'time / median >= ' || _limits($ratio) AS threshold,
    CASE WHEN value IS NULL THEN printf('no attempt %gx its median or slower that its data does not explain', $k)
         ELSE printf('%d straggler(s) not explained by data; worst %s on %s: %.1f s against a median %.1f s',
                     count(*) FILTER (WHERE straggler), arg_max(attempt_id, ratio) FILTER (WHERE straggler),
                     coalesce(arg_max(host, ratio) FILTER (WHERE straggler), 'an unknown host'),
                     max(dur_ms) FILTER (WHERE straggler) / 1000,
                     arg_max(median_ms, ratio) FILTER (WHERE straggler) / 1000) END AS detail,
    'look at the straggler''s host (phaseline report: skew by host); speculative execution (mapreduce.map.speculative) hides a slow host' AS recommendation,
    CASE WHEN count(ratio) = 0 THEN 'no map or reduce attempt with times to compare' END AS skipped
FROM (
    SELECT *, coalesce(ratio >= $k AND tasks >= $min_tasks AND coalesce(input_bytes_ratio, 1) <= $data_ratio, false)
        AS straggler
    FROM doctor_stragglers
    WHERE _for_job(job_id, $job_id)
)
GROUP BY job_id;
