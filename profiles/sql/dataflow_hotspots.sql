-- Method hotspots per dataflow vertex (HiTune, Dai et al. 2011, Figure 17).
-- One of two sources per job, never both added together:
--   * raw thread samples, when the job has reconstructed instances (source
--     'reconstruct', `phaseline dataflow`): each sample is associated with the vertex
--     instance of its thread whose span holds it (HiTune section 5.3: by target and
--     timestamp; a thread group instance's threads are its own thread and the others
--     listed in vertex_breakdown, kind 'thread'), and counted under its innermost
--     frame (stacks.top_frame), with its state;
--   * else HiTune's own breakdowns (vertex_breakdown, kind 'function'): its counts.
-- Parameters: $job_id, $top (methods kept per vertex).
-- Output columns: vertex, method, state ('RUNNABLE', a waiting state, or NULL when
--   the source gives none), samples, pct (of the vertex's samples), rank.
--   Raw samples count once each, under their innermost frame, so a vertex's pcts add
--   to 100.  HiTune's function counts are inclusive (a method counts every sample with
--   it anywhere on the stack, so MapRunner.run and the reader it calls both hold most
--   map samples): their pct is of the vertex's samples (its 'state' breakdown, one per
--   sample), and they can add past 100.
WITH vi AS (
    SELECT * FROM vertex_instances WHERE job_id = $job_id AND source = 'reconstruct'
),
vi_threads AS (  -- each rebuilt instance once per thread (dataflow_job_instances.sql)
    SELECT * FROM _instance_members($job_id, true)
),
from_samples AS (
    SELECT vi.vertex, st.top_frame AS method, s.state, count(*) AS samples
    FROM samples s
    JOIN vi_threads vi
      ON vi.job_id = s.job_id AND vi.member_id = s.thread_id
     AND s.ts_ms BETWEEN vi.start_ms AND vi.end_ms
     AND (s.host IS NULL OR vi.host IS NULL OR s.host = vi.host)
     AND (s.attempt_id IS NULL OR s.attempt_id = vi.attempt_id)
    JOIN (SELECT stack_id, any_value(top_frame) AS top_frame FROM stacks GROUP BY stack_id) st
      ON st.stack_id = s.stack_id
    WHERE s.job_id = $job_id
    GROUP BY ALL
),
from_breakdown AS (
    SELECT vertex, name AS method, CAST(NULL AS VARCHAR) AS state, sum(samples) AS samples
    FROM vertex_breakdown
    WHERE job_id = $job_id AND kind = 'function' AND NOT EXISTS (SELECT 1 FROM vi)
    GROUP BY ALL
),
_breakdown_total AS (  -- a vertex's samples: its state breakdown counts each sample once
    SELECT vertex, sum(samples) AS total
    FROM vertex_breakdown
    WHERE job_id = $job_id AND kind = 'state'
    GROUP BY ALL
),
counted AS (
    SELECT *, sum(samples) OVER (PARTITION BY vertex) AS total FROM from_samples WHERE samples > 0
    UNION ALL
    SELECT b.*, coalesce(t.total, sum(b.samples) OVER (PARTITION BY b.vertex)) AS total
    FROM from_breakdown AS b LEFT JOIN _breakdown_total AS t USING (vertex)
    WHERE b.samples > 0
)
SELECT
    vertex, method, state, samples,
    round(100.0 * samples / total, 2) AS pct,
    row_number() OVER (PARTITION BY vertex ORDER BY samples DESC, method) AS rank
FROM counted
QUALIFY rank <= $top
ORDER BY vertex, rank
