-- Defines the temporary table macro _sample_attempts(job_id): the thread samples of
-- one job, each attributed to an attempt (HiTune, Dai et al. 2011, section 5.3: a
-- record's Target is "the node name, the task name and the Java thread ID").
-- A macro, not a table, so that ten million samples need no materialized copy; both
-- dataflow_sample_period.sql and dataflow_sample_groups.sql read it, so the period is
-- estimated on the same thread traces the instances are built from.
--
-- Input: views samples, attempt_events.
--
-- Attempt attribution: a sample's own target (samples.attempt_id), else the
-- task-attempt logs: a thread serves, from its first log line for an attempt on,
-- that attempt (executor threads are reused: the latest attempt started on the
-- thread at or before the sample); samples before a thread's first attributed line
-- go to its first attempt (helper threads log late: "Finished spill N").
--
-- Output columns: the samples columns job_id, host, thread_id, thread_name, ts_ms,
--   state, stack_id; attempt_id (the attributed attempt, NULL: the thread
--   is bound to none); end_ms (ts_ms + duration); duration_ms (0 for point samples)
CREATE OR REPLACE TEMP MACRO _sample_attempts(job) AS TABLE
WITH s AS (
    SELECT * FROM samples WHERE job_id = job
),
bind AS (
    SELECT thread_id, attempt_id, min(ts_ms) AS first_ts
    FROM attempt_events
    WHERE job_id = job AND thread_id IS NOT NULL AND attempt_id IS NOT NULL
    GROUP BY thread_id, attempt_id
),
first_bind AS (
    SELECT thread_id, arg_min(attempt_id, first_ts) AS attempt_id FROM bind GROUP BY thread_id
),
as_of AS (
    SELECT s.*, b.attempt_id AS bound_attempt
    FROM s ASOF LEFT JOIN bind b ON s.thread_id = b.thread_id AND s.ts_ms >= b.first_ts
)
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
    coalesce(a.duration_ms, 0) AS duration_ms
FROM as_of a
LEFT JOIN first_bind f ON a.thread_id = f.thread_id
