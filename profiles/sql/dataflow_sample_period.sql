-- The sampling period of a job's point samples (no duration), estimated as the
-- median gap between consecutive samples of the same thread.
-- Parameters: $job_id.  Output: period_ms (NULL when no thread has two samples).
WITH gaps AS (
    SELECT ts_ms - lag(ts_ms) OVER (PARTITION BY host, thread_id ORDER BY ts_ms) AS gap
    FROM samples
    WHERE job_id = $job_id AND coalesce(duration_ms, 0) = 0
)
SELECT median(gap) AS period_ms FROM gaps WHERE gap > 0
