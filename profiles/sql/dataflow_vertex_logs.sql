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
WITH vi AS (  -- one source of instances per job (see above)
    SELECT * FROM vertex_instances
    WHERE job_id = $job_id
      AND (source = 'reconstruct') = (SELECT coalesce(bool_or(source = 'reconstruct'), false)
                                      FROM vertex_instances WHERE job_id = $job_id)
),
vi_threads AS (  -- each instance once per thread: its own, and the other threads of a thread group
    SELECT vi.*, vi.thread_id AS member_id FROM vi
    UNION
    SELECT vi.*, b.thread_id AS member_id
    FROM vi
    JOIN vertex_breakdown b
      ON b.job_id = vi.job_id AND b.attempt_id = vi.attempt_id AND b.vertex = vi.vertex
     AND b.kind = 'thread' AND b.source = vi.source
)
SELECT vi.attempt_id, vi.thread_id, vi.vertex, e.kind, count(*) AS records,
       min(e.ts_ms) AS first_ms, max(e.ts_ms) AS last_ms
FROM vi_threads vi
JOIN attempt_events e
  ON e.attempt_id = vi.attempt_id AND e.thread_id = vi.member_id
 AND e.ts_ms BETWEEN vi.start_ms AND vi.end_ms
GROUP BY ALL
ORDER BY vi.attempt_id, vi.thread_id, vi.vertex, e.kind
