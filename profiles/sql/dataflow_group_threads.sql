-- The threads of each thread group pool's vertex instance (HiTune section 4.2: a group's threads run in
-- concert and make one instance), one row per thread, as phaseline dataflow's breakdown stores them.
--
-- Input: the temporary table _threads (the output of dataflow_instance_threads.sql).
-- Parameters: $kind (the breakdown's kind for a thread).
--
-- Output columns: job_id, attempt_id, host, thread_id, vertex, kind, name (the thread's name),
--   samples, source ('reconstruct')
SELECT job_id, attempt_id, host, thread_id, vertex, $kind AS kind, thread_name AS name, samples,
       'reconstruct' AS source
FROM _threads WHERE grouped
ORDER BY attempt_id, vertex, thread_id
