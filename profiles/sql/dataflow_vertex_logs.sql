-- Log records associated with the vertex instances they overlap (HiTune, Dai et
-- al. 2011, section 5.3): task-log lines (attempt_events) of the same attempt and
-- thread written during an instance's span, counted by kind.
-- Parameters: $job_id.
-- Output columns: attempt_id, thread_id, vertex, kind, records, first_ms, last_ms
SELECT vi.attempt_id, vi.thread_id, vi.vertex, e.kind, count(*) AS records,
       min(e.ts_ms) AS first_ms, max(e.ts_ms) AS last_ms
FROM vertex_instances vi
JOIN attempt_events e
  ON e.attempt_id = vi.attempt_id AND e.thread_id = vi.thread_id
 AND e.ts_ms BETWEEN vi.start_ms AND vi.end_ms
WHERE vi.job_id = $job_id
GROUP BY ALL
ORDER BY vi.attempt_id, vi.thread_id, vi.vertex, e.kind
