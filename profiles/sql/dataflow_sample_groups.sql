-- Thread samples of one job, each attributed to an attempt and a dataflow vertex
-- (HiTune, Dai et al. 2011, section 5.3).
--
-- Inputs: the table macro _sample_attempts (dataflow_sample_attempts.sql: the job's
-- samples, each with the attempt it is attributed to, from its own target or the
-- task-attempt logs); the registered relation _stack_vertex (stack_id, thread_name,
-- vertex, status) from resolving each distinct execution position against a
-- specification (profiles/dataflow/spec.py).
-- Parameters: $job_id.
--
-- The samples are then grouped (so that ten million samples need no materialized copy):
-- one row per attempt, thread, vertex and status; for samples that map to no vertex
-- also per stack and thread name, to report the unmapped execution positions.
--
-- Busy and idle: a point sample (no duration) is busy in state RUNNABLE, idle in
-- another; an event with a duration is a wait, idle for its whole length, whatever
-- its state: JFR's parks, monitor waits and entries, sleeps, and its file and socket
-- reads and writes, which it records in state RUNNABLE (the thread is inside the
-- read) -- HiTune reads such waits as idle time (section 7.3, Figure 20: reduces
-- "have more idle time, waiting in the DFSOutputStream.writeChunk method").
--
-- Output columns:
--   job_id, attempt_id (NULL: thread bound to no attempt), thread_id, vertex (NULL
--   unless status = 'mapped'), status (mapped / unmapped / ambiguous / nostack),
--   stack_id and position_thread (only for status <> 'mapped'), host (any sample's),
--   thread_name (of the latest sample), start_ms (first sample), end_ms (last sample's
--   ts_ms + duration), samples, busy_point (point samples in state RUNNABLE),
--   idle_point (point samples in another state), wait_ms (summed durations of the
--   events with one: waits, blocks and I/O)
WITH attributed AS (
    SELECT
        a.job_id, a.attempt_id, a.host, a.thread_id, a.thread_name, a.ts_ms, a.end_ms, a.state,
        a.stack_id, a.duration_ms,
        CASE WHEN v.status = 'mapped' THEN v.vertex END AS vertex,
        CASE WHEN a.stack_id IS NULL THEN 'nostack' ELSE coalesce(v.status, 'unmapped') END AS status
    FROM _sample_attempts($job_id) a
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
    coalesce(sum(duration_ms) FILTER (WHERE duration_ms > 0), 0) AS wait_ms
FROM attributed
GROUP BY ALL
