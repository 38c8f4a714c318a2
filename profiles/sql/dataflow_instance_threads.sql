-- The ranges of a job's vertex instances in each thread trace (HiTune, Dai et al.
-- 2011, section 5.3): per attempt, thread and vertex, the span from the first to the
-- last sample of the vertex's program location, with busy/idle sample counts.
-- dataflow_instances.sql makes instances of them: one range each, except for a
-- vertex a Thread Group Pool runs, whose ranges in the threads of one attempt make one
-- instance ("multiple ranges each in a different thread").
--
-- Input: the temporary table _groups (the output of dataflow_sample_groups.sql),
-- view attempts (for the host of attempts whose samples carry none).
-- Parameters: $period_ms (the sampling period: a wait event of duration d counts
-- as d / period_ms idle samples, so JFR's wait events weigh like HiTune's periodic
-- samples of a waiting thread); $group_vertices (the vertices thread group pools
-- run, DataflowSpec.group_vertices()).
--
-- Output columns: job_id, attempt_id, host, thread_id, thread_name, vertex,
--   grouped (the vertex is a thread group pool's), start_ms, end_ms, samples
--   (= busy + idle), busy_samples (point samples in state RUNNABLE), idle_samples
--   (point samples in another state, plus waits in sampling periods)
WITH hosts AS (
    SELECT attempt_id, any_value(host) AS host FROM attempts GROUP BY attempt_id
),
agg AS (
    SELECT
        job_id, attempt_id, thread_id, vertex,
        any_value(host) AS sample_host,
        arg_max(thread_name, end_ms) AS thread_name,
        min(start_ms) AS start_ms,
        max(end_ms) AS end_ms,
        sum(busy_point) AS busy_samples,
        sum(idle_point) + CAST(round(sum(wait_ms) / $period_ms) AS BIGINT) AS idle_samples
    FROM _groups
    WHERE vertex IS NOT NULL AND attempt_id IS NOT NULL
    GROUP BY job_id, attempt_id, thread_id, vertex
)
SELECT
    agg.job_id, agg.attempt_id, coalesce(agg.sample_host, h.host) AS host, agg.thread_id,
    agg.thread_name, agg.vertex, list_contains($group_vertices, agg.vertex) AS grouped,
    agg.start_ms, agg.end_ms,
    CAST(agg.busy_samples + agg.idle_samples AS BIGINT) AS samples,
    CAST(agg.busy_samples AS BIGINT) AS busy_samples, CAST(agg.idle_samples AS BIGINT) AS idle_samples
FROM agg LEFT JOIN hosts h ON h.attempt_id = agg.attempt_id
