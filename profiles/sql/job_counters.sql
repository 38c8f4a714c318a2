-- job_counters: the job-level counters of each job as its history reports them.
--
-- Output columns
--   job_id
--   scope          'job_total', 'job_map' or 'job_reduce'
--   group_name, counter_name, value

CREATE OR REPLACE TEMP VIEW job_counters AS
SELECT job_id, scope, group_name, counter_name, max(value) AS value
FROM counters
WHERE scope IN ('job_total', 'job_map', 'job_reduce')
GROUP BY ALL;

SELECT * FROM job_counters WHERE job_id = $job_id ORDER BY scope, group_name, counter_name;
