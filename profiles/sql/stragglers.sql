-- stragglers: attempts (or their phases) slower than k times the median of their phase.
-- requires: _phase_durations
--
-- The median is over the successful attempts of the same job, task type and phase
-- (phase = 'attempt' for whole attempts); every attempt is measured against it,
-- whatever its status, so a slow attempt killed by a speculative twin shows too.
--
--   REDUCE  |--shuffle--|sort|red|                  median shuffle = 10
--           |--shuffle--------------------|...      ratio 2.6 -> straggler for k = 1.5
--
-- Output columns
--   job_id, task_id, attempt_id, task_type, status, host, phase
--   dur_ms, median_ms, ratio (dur_ms / median_ms; NULL when the median is 0)
-- Parameters: $job_id, $k (the threshold: rows with ratio >= $k)

CREATE OR REPLACE TEMP VIEW stragglers AS
WITH _medians AS (
    SELECT job_id, task_type, phase, median(dur_ms) AS median_ms
    FROM _phase_durations WHERE status = 'SUCCEEDED'
    GROUP BY job_id, task_type, phase
)
SELECT
    d.job_id, d.task_id, d.attempt_id, d.task_type, d.status, d.host, d.phase,
    d.dur_ms, m.median_ms,
    CASE WHEN m.median_ms > 0 THEN d.dur_ms / m.median_ms END AS ratio
FROM _phase_durations AS d
JOIN _medians AS m ON m.job_id = d.job_id AND m.task_type = d.task_type AND m.phase = d.phase;

SELECT * FROM stragglers
WHERE job_id = $job_id AND ratio >= $k
ORDER BY ratio DESC, attempt_id, phase;
