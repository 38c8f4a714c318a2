-- Vertex instances of one job (HiTune, Dai et al. 2011, section 5.3): a program
-- location is "a range of consecutive sampling records in one thread trace (or, in
-- the case of thread group, multiple ranges each in a different thread)".  So an
-- instance is one thread's range of a vertex within an attempt, except for a vertex
-- a Thread Group Pool runs (section 4.2: its threads "run in concert"): the ranges of
-- all its threads in the attempt are one instance, as in section 6.2's count of
-- 2*M + 4*R instances and HiTune's own reports (one Copier instance per reduce).
--
-- Input: the temporary table _threads (the output of dataflow_instance_threads.sql).
--
-- Output columns: job_id, attempt_id, host, thread_id and thread_name (the range's
--   thread; of a thread group, its lowest thread id, as HiTune names the group by its
--   first copier), vertex, start_ms, end_ms (first and last sample over the ranges),
--   samples (= busy + idle), busy_samples (point samples in state RUNNABLE),
--   idle_samples (point samples in another state, plus waits in sampling periods),
--   source ('reconstruct')
SELECT
    job_id, attempt_id, any_value(host) AS host,
    min(thread_id) AS thread_id, arg_min(thread_name, thread_id) AS thread_name, vertex,
    min(start_ms) AS start_ms, max(end_ms) AS end_ms,
    CAST(sum(samples) AS BIGINT) AS samples,
    CAST(sum(busy_samples) AS BIGINT) AS busy_samples, CAST(sum(idle_samples) AS BIGINT) AS idle_samples,
    'reconstruct' AS source
FROM _threads
GROUP BY job_id, attempt_id, vertex, CASE WHEN grouped THEN NULL ELSE thread_id END
ORDER BY start_ms, attempt_id, thread_id, vertex
