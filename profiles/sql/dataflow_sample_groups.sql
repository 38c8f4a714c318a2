-- Thread samples of one job, each attributed to an attempt and a dataflow vertex
-- (HiTune, Dai et al. 2011, section 5.3).
--
-- Inputs: views samples, attempt_events; the registered relation _stack_vertex
-- (stack_id, thread_name, vertex, status) from resolving each distinct execution
-- position against a specification (profiles/dataflow/spec.py).
-- Parameters: $job_id.
--
-- Attempt attribution: a sample's own target (samples.attempt_id), else the
-- task-attempt logs: a thread serves, from its first log line for an attempt on,
-- that attempt (executor threads are reused: the latest attempt started on the
-- thread at or before the sample); samples before a thread's first attributed line
-- go to its first attempt (helper threads log late: "Finished spill N").
--
-- The samples are then grouped (so that ten million samples need no materialized copy):
-- one row per attempt, thread, vertex and status; for samples that map to no vertex
-- also per stack and thread name, to report the unmapped execution positions.
--
-- Output columns:
--   job_id, attempt_id (NULL: thread bound to no attempt), thread_id, vertex (NULL
--   unless status = 'mapped'), status (mapped / unmapped / ambiguous / nostack),
--   stack_id and position_thread (only for status <> 'mapped'), host (any sample's),
--   thread_name (of the latest sample), start_ms (first sample), end_ms (last sample's
--   ts_ms + duration), samples, busy_point (point samples in state RUNNABLE),
--   idle_point (point samples in another state), wait_ms (summed durations of
--   waiting/blocked events)
WITH s AS (
    SELECT * FROM samples WHERE job_id = $job_id
),
bind AS (
    SELECT thread_id, attempt_id, min(ts_ms) AS first_ts
    FROM attempt_events
    WHERE job_id = $job_id AND thread_id IS NOT NULL AND attempt_id IS NOT NULL
    GROUP BY thread_id, attempt_id
),
first_bind AS (
    SELECT thread_id, arg_min(attempt_id, first_ts) AS attempt_id FROM bind GROUP BY thread_id
),
as_of AS (
    SELECT s.*, b.attempt_id AS bound_attempt
    FROM s ASOF LEFT JOIN bind b ON s.thread_id = b.thread_id AND s.ts_ms >= b.first_ts
),
attributed AS (
    SELECT
        a.job_id,
        coalesce(a.attempt_id, a.bound_attempt, f.attempt_id) AS attempt_id,
        a.host,
        a.thread_id,
        a.thread_name,
        a.ts_ms,
        a.ts_ms + CAST(round(coalesce(a.duration_ms, 0)) AS BIGINT) AS end_ms,
        a.state,
        a.stack_id,
        coalesce(a.duration_ms, 0) AS duration_ms,
        CASE WHEN v.status = 'mapped' THEN v.vertex END AS vertex,
        CASE WHEN a.stack_id IS NULL THEN 'nostack' ELSE coalesce(v.status, 'unmapped') END AS status
    FROM as_of a
    LEFT JOIN first_bind f ON a.thread_id = f.thread_id
    LEFT JOIN _stack_vertex v
        ON v.stack_id = a.stack_id AND v.thread_name IS NOT DISTINCT FROM a.thread_name
)
SELECT
    job_id, attempt_id, thread_id, vertex, status,
    CASE WHEN status <> 'mapped' THEN stack_id END AS stack_id,
    CASE WHEN status <> 'mapped' THEN thread_name END AS position_thread,
    any_value(host) AS host,
    arg_max(thread_name, ts_ms) AS thread_name,
    min(ts_ms) AS start_ms,
    max(end_ms) AS end_ms,
    count(*) AS samples,
    count(*) FILTER (WHERE duration_ms = 0 AND state = 'RUNNABLE') AS busy_point,
    count(*) FILTER (WHERE duration_ms = 0 AND state <> 'RUNNABLE') AS idle_point,
    coalesce(sum(duration_ms) FILTER (
        WHERE duration_ms > 0 AND state IN ('WAITING', 'TIMED_WAITING', 'BLOCKED')), 0) AS wait_ms
FROM attributed
GROUP BY ALL
