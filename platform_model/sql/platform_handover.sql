-- The slot handover of the profiled jobs, per task type: how long a freed slot stood idle before
-- the next attempt of the job took it (profiles/sql/slot_handover.sql's view, installed first).
--
-- Parameters: $job_name  only the jobs of this name (NULL: every job).
--
-- Output columns (one row per task type with a handover)
--   task_type, ms (the median over every handover of those jobs), handovers, jobs
SELECT task_type, median(gap_ms)::DOUBLE AS ms, count(*) AS handovers, count(DISTINCT job_id) AS jobs
FROM slot_handover
WHERE CAST($job_name AS VARCHAR) IS NULL OR job_id IN (SELECT job_id FROM jobs WHERE name = $job_name)
GROUP BY task_type
ORDER BY task_type
