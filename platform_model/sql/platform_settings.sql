-- The Hadoop settings a platform profile was measured with: for each configuration
-- key that matters to the generic phases, the distinct values over the profiled jobs.
--
-- Parameters: $keys (VARCHAR[]): the keys to report; $job_name: only the jobs of this name (NULL: every job).
--
-- Output columns
--   key        the configuration key
--   value      one value it had
--   jobs       how many profiled jobs had that value
WITH profiled AS (
    SELECT DISTINCT job_id FROM attempts WHERE status = 'SUCCEEDED'
        AND (CAST($job_name AS VARCHAR) IS NULL OR job_id IN (SELECT job_id FROM jobs WHERE name = $job_name))
)
SELECT c.key, c.value, count(DISTINCT c.job_id) AS jobs
FROM conf c
JOIN profiled USING (job_id)
WHERE list_contains($keys, c.key)
GROUP BY c.key, c.value
ORDER BY c.key, jobs DESC, c.value
