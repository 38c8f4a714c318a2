-- wasted_summary: per job, task type and status, the attempts that came to nothing and their time.
-- requires: wasted
--
-- Output columns
--   job_id, task_type, status ('FAILED' or 'KILLED')
--   attempts           how many
--   wasted_ms          total of their durations (attempts without times count 0)
--   attempt_ms         total duration of all attempts of the job and type, every status
--   wasted_share       wasted_ms / attempt_ms

CREATE OR REPLACE TEMP VIEW wasted_summary AS
WITH _all AS (
    SELECT job_id, task_type, sum(finish_ms - start_ms) AS attempt_ms
    FROM attempts WHERE finish_ms >= start_ms
    GROUP BY job_id, task_type
)
SELECT
    w.job_id, w.task_type, w.status,
    count(*) AS attempts,
    coalesce(sum(w.wasted_ms), 0) AS wasted_ms,
    any_value(a.attempt_ms) AS attempt_ms,
    coalesce(sum(w.wasted_ms), 0) / nullif(any_value(a.attempt_ms), 0) AS wasted_share
FROM wasted AS w
LEFT JOIN _all AS a ON a.job_id = w.job_id AND a.task_type = w.task_type
GROUP BY w.job_id, w.task_type, w.status;

SELECT * FROM wasted_summary WHERE job_id = $job_id ORDER BY task_type, status;
