-- exceptions: a failed job, or failed task attempts, and the first error they left (Dr. Elephant's Exception).
-- requires: _severity, _job_filter, job_summary
--
-- Dr. Elephant (ExceptionHeuristic.java) shows a failed job's exception.  Here a failed (or killed)
-- job is Critical, and a successful one is graded by its failed task attempts (1, 2, 4, 8 by
-- default): each failure is work done twice.  The detail quotes the first error's first line.
--
-- Output columns
--   job_id, level, severity, value (failed attempts), threshold, detail, recommendation, skipped
-- Parameters: $job_id, $failed_attempts

CREATE OR REPLACE TEMP VIEW doctor_exceptions AS
WITH _err AS (
    SELECT job_id,
        first(split_part(error, chr(10), 1) ORDER BY finish_ms NULLS LAST, attempt_id)
            FILTER (WHERE error IS NOT NULL AND error <> '') AS first_error,
        first(attempt_id ORDER BY finish_ms NULLS LAST, attempt_id)
            FILTER (WHERE error IS NOT NULL AND error <> '') AS first_error_attempt
    FROM attempts
    WHERE status = 'FAILED'
    GROUP BY job_id
)
SELECT j.job_id, j.status, j.failed_attempts, e.first_error, e.first_error_attempt, jb.diagnostics
FROM job_summary AS j
LEFT JOIN _err AS e ON e.job_id = j.job_id
LEFT JOIN jobs AS jb ON jb.job_id = j.job_id;

SELECT
    job_id,
    failed_attempts AS value,
    CASE WHEN status IN ('FAILED', 'KILLED', 'ERROR') THEN 4
         ELSE _sev_asc(coalesce(failed_attempts, 0), $failed_attempts) END AS level,
    _sev_name(level) AS severity,
    'job failed, or failed attempts >= ' || _limits($failed_attempts) AS threshold,
    printf('job %s, %d failed attempt(s)%s', coalesce(status, 'of unknown status'), coalesce(failed_attempts, 0),
           CASE WHEN first_error IS NOT NULL THEN printf('; first: %s: %s', first_error_attempt, left(first_error, 200))
                WHEN diagnostics IS NOT NULL AND diagnostics <> '' THEN '; ' || left(split_part(diagnostics, chr(10), 1), 200)
                ELSE '' END) AS detail,
    'read the failed attempt''s log for the cause; a task that fails on one host only points at the host' AS recommendation,
    CAST(NULL AS VARCHAR) AS skipped
FROM doctor_exceptions
WHERE _for_job(job_id, $job_id);
