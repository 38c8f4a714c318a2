-- wasted: failed and killed attempts and the slot time they used for nothing.
-- requires: timeline
--
--   task_0001  |--attempt_0 FAILED--|  |---attempt_1 SUCCEEDED---|      wasted = span of attempt_0
--   task_0002  |------attempt_0 SUCCEEDED------|
--                      |--attempt_1 KILLED--|                          speculative, wasted
--
-- Output columns
--   job_id, task_id, attempt_id, task_type, status ('FAILED' or 'KILLED'), host
--   start_ms, finish_ms
--   wasted_ms        finish_ms - start_ms (timeline's dur_ms: NULL when the source lacks either
--                    time or its finish precedes its start)
--   speculative      the attempt ran beside an earlier attempt of the same task
--   task_succeeded   another attempt of the task succeeded
--   error            the attempt's diagnostic

CREATE OR REPLACE TEMP VIEW wasted AS
WITH _ok AS (
    SELECT DISTINCT job_id, task_id FROM attempts WHERE status = 'SUCCEEDED'
)
SELECT
    t.job_id, t.task_id, t.attempt_id, t.task_type, t.status, t.host, t.start_ms, t.finish_ms,
    t.dur_ms AS wasted_ms,
    t.speculative,
    o.task_id IS NOT NULL AS task_succeeded,
    t.error
FROM timeline AS t
LEFT JOIN _ok AS o ON o.job_id = t.job_id AND o.task_id = t.task_id
WHERE t.status IN ('FAILED', 'KILLED');

SELECT * FROM wasted WHERE job_id = $job_id ORDER BY start_ms NULLS LAST, attempt_id;
