-- job_summary: one row per job with its identity, times, and attempt counts.
--
-- Jobs known only from attempts (task logs without a history file) get a row too.
--
-- Output columns
--   job_id, name, user, queue, status, hadoop_version, source_format
--   submit_ms, launch_ms, finish_ms
--   first_start_ms, last_finish_ms    over the job's attempts
--   makespan_ms      the job's duration: finish (else last attempt finish) - submit (else launch,
--                    else first start)
--   task_span_ms     ARIA's completion time (Verma et al. 2011): first successful map or reduce
--                    attempt start -> last successful one's finish (job setup and commit aside);
--                    NULL without both.  The one definition: a profile's makespans_ms
--                    (profiles.extract) and the backtest's measured span (predict/backtest_runs.sql)
--   maps, reduces    distinct map / reduce tasks with attempts
--   total_maps, total_reduces   as the job record says
--   attempts, failed_attempts, killed_attempts
--   uberized         whether any of the job's records says it ran uberized (the .jhist's JOB_INITED)

CREATE OR REPLACE TEMP VIEW job_summary AS
WITH _a AS (
    SELECT
        job_id,
        min(start_ms) AS first_start_ms,
        max(finish_ms) AS last_finish_ms,
        max(finish_ms) FILTER (WHERE status = 'SUCCEEDED' AND task_type IN ('MAP', 'REDUCE'))
            - min(start_ms) FILTER (WHERE status = 'SUCCEEDED' AND task_type IN ('MAP', 'REDUCE')) AS task_span_ms,
        count(DISTINCT task_id) FILTER (WHERE task_type = 'MAP') AS maps,
        count(DISTINCT task_id) FILTER (WHERE task_type = 'REDUCE') AS reduces,
        count(*) AS attempts,
        count(*) FILTER (WHERE status = 'FAILED') AS failed_attempts,
        count(*) FILTER (WHERE status = 'KILLED') AS killed_attempts
    FROM attempts GROUP BY job_id
),
_j AS (
    SELECT * FROM jobs QUALIFY row_number() OVER (PARTITION BY job_id ORDER BY finish_ms DESC NULLS LAST) = 1
),
_u AS (
    SELECT job_id, bool_or(uberized) AS uberized FROM jobs GROUP BY job_id
),
_ids AS (
    SELECT job_id FROM _j UNION SELECT job_id FROM _a
)
SELECT
    i.job_id, j.name, j.user, j.queue, j.status, j.hadoop_version, j.source_format,
    j.submit_ms, j.launch_ms, j.finish_ms,
    a.first_start_ms, a.last_finish_ms,
    coalesce(j.finish_ms, a.last_finish_ms) - coalesce(j.submit_ms, j.launch_ms, a.first_start_ms) AS makespan_ms,
    a.task_span_ms,
    coalesce(a.maps, 0) AS maps, coalesce(a.reduces, 0) AS reduces,
    j.total_maps, j.total_reduces,
    coalesce(a.attempts, 0) AS attempts,
    coalesce(a.failed_attempts, 0) AS failed_attempts,
    coalesce(a.killed_attempts, 0) AS killed_attempts,
    coalesce(u.uberized, false) AS uberized
FROM _ids AS i
LEFT JOIN _j AS j ON j.job_id = i.job_id
LEFT JOIN _a AS a ON a.job_id = i.job_id
LEFT JOIN _u AS u ON u.job_id = i.job_id;

SELECT * FROM job_summary WHERE job_id = $job_id;
