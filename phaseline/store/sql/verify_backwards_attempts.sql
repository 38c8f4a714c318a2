-- verify_backwards_attempts: jobs with attempts that finish before they start.
--
-- Output columns
--   job_id, attempts, most_ms (the most negative finish - start), attempt_id (that attempt)
SELECT job_id, count(*) AS attempts, min(finish_ms - start_ms) AS most_ms,
       arg_min(attempt_id, finish_ms - start_ms) AS attempt_id
FROM attempts WHERE finish_ms < start_ms
GROUP BY job_id ORDER BY job_id
