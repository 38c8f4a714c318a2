-- verify_early_attempts: jobs with attempts that start more than $clock_slack_ms before the job
-- was submitted (the trace's clocks disagree).
--
-- Output columns
--   job_id, attempts, earliest_ms (the most negative start - submit)
SELECT a.job_id, count(*) AS attempts, min(a.start_ms - j.submit_ms) AS earliest_ms
FROM attempts AS a
JOIN (SELECT job_id, min(submit_ms) AS submit_ms FROM jobs GROUP BY job_id) AS j USING (job_id)
WHERE a.start_ms < j.submit_ms - $clock_slack_ms
GROUP BY a.job_id ORDER BY a.job_id
