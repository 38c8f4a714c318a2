-- _phase_durations: one duration per (attempt, phase), plus one per attempt for its whole span.
-- requires: phases
--
-- The whole-attempt rows carry phase = 'attempt'; an attempt with several rows of
-- the same phase (log sources: several spills) gets their sum.  Shared by
-- skew_hosts and stragglers.
--
-- Output columns
--   job_id, task_id, attempt_id, task_type, status, host, phase, dur_ms

CREATE OR REPLACE TEMP VIEW _phase_durations AS
SELECT job_id, task_id, attempt_id, task_type, status, host, 'attempt' AS phase, finish_ms - start_ms AS dur_ms
FROM attempts
WHERE task_type IN ('MAP', 'REDUCE') AND start_ms IS NOT NULL AND finish_ms >= start_ms
UNION ALL
-- history phases are one row per (attempt, phase) already
SELECT job_id, task_id, attempt_id, task_type, status, host, phase, dur_ms
FROM _phase_times
WHERE source = 'history'
UNION ALL
SELECT job_id, any_value(task_id), attempt_id, any_value(task_type), any_value(status), any_value(host),
    phase, sum(dur_ms) AS dur_ms
FROM _phase_times
WHERE source <> 'history'
GROUP BY job_id, attempt_id, phase;

SELECT * FROM _phase_durations WHERE job_id = $job_id ORDER BY attempt_id, phase;
