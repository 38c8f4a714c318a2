-- slowstart: when the first reduce started, measured against the maps (reduce slow-start).
--
-- Output columns
--   job_id
--   maps                    map tasks of the job (distinct task ids with an attempt)
--   first_map_start_ms      earliest map attempt start
--   last_map_finish_ms      latest finish of a successful map attempt
--   first_reduce_start_ms   earliest reduce attempt start (NULL for map-only jobs)
--   maps_done_at_reduce_start  map tasks whose successful attempt finished at or before it
--   slowstart_observed      maps_done_at_reduce_start / maps
--   slowstart_conf          mapreduce.job.reduce.slowstart.completedmaps (or the 1.x
--                           mapred.reduce.slowstart.completed.maps) from the job conf, if known
--   reduce_lead_ms          last_map_finish_ms - first_reduce_start_ms: how long reduces ran
--                           alongside maps (negative: reduces started after the last map)

CREATE OR REPLACE TEMP VIEW slowstart AS
WITH _maps AS (
    SELECT
        job_id,
        count(DISTINCT task_id) AS maps,
        min(start_ms) AS first_map_start_ms,
        max(finish_ms) FILTER (WHERE status = 'SUCCEEDED') AS last_map_finish_ms
    FROM attempts WHERE task_type = 'MAP'
    GROUP BY job_id
),
_reduces AS (
    SELECT job_id, min(start_ms) AS first_reduce_start_ms
    FROM attempts WHERE task_type = 'REDUCE'
    GROUP BY job_id
),
_map_done AS (
    SELECT job_id, task_id, min(finish_ms) AS done_ms
    FROM attempts WHERE task_type = 'MAP' AND status = 'SUCCEEDED'
    GROUP BY job_id, task_id
),
_done_at AS (
    SELECT d.job_id, count(*) AS n
    FROM _map_done AS d
    JOIN _reduces AS r ON r.job_id = d.job_id
    WHERE d.done_ms <= r.first_reduce_start_ms
    GROUP BY d.job_id
),
_conf AS (
    SELECT job_id, arg_min(TRY_CAST(value AS DOUBLE),
        CASE key WHEN 'mapreduce.job.reduce.slowstart.completedmaps' THEN 1 ELSE 2 END) AS slowstart_conf
    FROM conf
    WHERE key IN ('mapreduce.job.reduce.slowstart.completedmaps', 'mapred.reduce.slowstart.completed.maps')
    GROUP BY job_id
)
SELECT
    m.job_id,
    m.maps,
    m.first_map_start_ms,
    m.last_map_finish_ms,
    r.first_reduce_start_ms,
    CASE WHEN r.first_reduce_start_ms IS NOT NULL THEN coalesce(n.n, 0) END AS maps_done_at_reduce_start,
    maps_done_at_reduce_start / m.maps AS slowstart_observed,
    c.slowstart_conf,
    m.last_map_finish_ms - r.first_reduce_start_ms AS reduce_lead_ms
FROM _maps AS m
LEFT JOIN _reduces AS r ON r.job_id = m.job_id
LEFT JOIN _done_at AS n ON n.job_id = m.job_id
LEFT JOIN _conf AS c ON c.job_id = m.job_id;

SELECT * FROM slowstart WHERE job_id = $job_id;
