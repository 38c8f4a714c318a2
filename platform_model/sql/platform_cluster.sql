-- The cluster a platform profile was measured on, as far as the store knows it.
--
-- Parameters: $job_name  only the jobs of this name (NULL: every job).
--
-- Output columns (one row)
--   jobs              profiled jobs (with at least one successful attempt)
--   hosts             distinct hosts that ran their attempts
--   host_names        those hosts, comma separated (first 20)
--   hadoop_versions   distinct Hadoop versions of those jobs, comma separated
--   source_formats    distinct source formats of those jobs, comma separated
--   first_submit_ms, last_finish_ms   the time span of the profiled jobs
WITH profiled AS (
    SELECT DISTINCT job_id FROM attempts WHERE status = 'SUCCEEDED'
        AND (CAST($job_name AS VARCHAR) IS NULL OR job_id IN (SELECT job_id FROM jobs WHERE name = $job_name))
),
_hosts AS (
    SELECT DISTINCT host FROM attempts JOIN profiled USING (job_id) WHERE host IS NOT NULL
)
SELECT
    (SELECT count(*) FROM profiled) AS jobs,
    (SELECT count(*) FROM _hosts) AS hosts,
    (SELECT string_agg(host, ',' ORDER BY host) FROM (SELECT host FROM _hosts ORDER BY host LIMIT 20)) AS host_names,
    (SELECT string_agg(DISTINCT hadoop_version, ',') FROM jobs JOIN profiled USING (job_id)) AS hadoop_versions,
    (SELECT string_agg(DISTINCT source_format, ',') FROM jobs JOIN profiled USING (job_id)) AS source_formats,
    (SELECT min(submit_ms) FROM jobs JOIN profiled USING (job_id)) AS first_submit_ms,
    (SELECT max(finish_ms) FROM jobs JOIN profiled USING (job_id)) AS last_finish_ms
