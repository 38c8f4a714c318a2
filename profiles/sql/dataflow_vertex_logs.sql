-- Log records associated with the vertex instances they overlap (HiTune, Dai et
-- al. 2011, section 5.3): task-log lines (attempt_events) of the same attempt and
-- thread written during an instance's span, counted by kind.  A thread group
-- instance's threads are its own thread and the others listed in vertex_breakdown
-- (kind 'thread').
-- Instances: one source per job, never both added together: the reconstructed ones
--   (source 'reconstruct', `phaseline dataflow`) when the job has them, else HiTune's
--   own (source 'hitune_csv', from its CSV reports).
-- Parameters: $job_id.
-- Output columns: attempt_id, thread_id (the instance's), vertex, kind, records,
--   first_ms, last_ms
WITH vi_threads AS (  -- each instance once per thread (dataflow_job_instances.sql)
    SELECT * FROM _instance_members($job_id, false)
)
SELECT vi.attempt_id, vi.thread_id, vi.vertex, e.kind, count(*) AS records,
       min(e.ts_ms) AS first_ms, max(e.ts_ms) AS last_ms
FROM vi_threads vi
JOIN attempt_events e
  ON e.attempt_id = vi.attempt_id AND e.thread_id = vi.member_id
 AND e.ts_ms BETWEEN vi.start_ms AND vi.end_ms
GROUP BY ALL
ORDER BY vi.attempt_id, vi.thread_id, vi.vertex, e.kind
