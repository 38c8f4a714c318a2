-- The stack positions no vertex (or several) matched, most samples first: what a spec misses.
--
-- Input: the temporary table _groups (dataflow_sample_groups.sql) and the registered relation
--   _stack_vertex (each stack's resolved position and candidate vertices).
--
-- Output columns: status (unmapped, nostack, ambiguous), position_thread, top and bottom frame of
--   the stack, vertex (the candidates, comma-separated, where ambiguous), n (samples)
SELECT g.status, g.position_thread, st.frames[1] AS top_frame, st.frames[-1] AS bottom_frame, v.vertex,
       sum(g.samples) AS n
FROM _groups g
LEFT JOIN (SELECT stack_id, any_value(frames) AS frames FROM stacks GROUP BY stack_id) st
  ON st.stack_id = g.stack_id
LEFT JOIN _stack_vertex v
  ON v.stack_id = g.stack_id AND v.thread_name IS NOT DISTINCT FROM g.position_thread
WHERE g.status <> 'mapped'
GROUP BY ALL ORDER BY n DESC, g.position_thread
