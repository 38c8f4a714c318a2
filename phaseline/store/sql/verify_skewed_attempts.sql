-- verify_skewed_attempts: jobs with attempts that start more than $clock_slack_ms before their task
-- was started (a 0.20 log takes a task's start from the JobTracker's clock and its attempts' from
-- the TaskTrackers': a tracker's clock behind the JobTracker's).
--
-- Output columns
--   job_id, attempts, earliest_ms (the most negative attempt start - task start), attempt_id (that attempt)
SELECT a.job_id, count(*) AS attempts, min(a.start_ms - t.start_ms) AS earliest_ms,
       arg_min(a.attempt_id, a.start_ms - t.start_ms) AS attempt_id
FROM attempts AS a
JOIN tasks AS t ON t.job_id = a.job_id AND t.task_id = a.task_id
WHERE a.start_ms < t.start_ms - $clock_slack_ms
GROUP BY a.job_id ORDER BY a.job_id
