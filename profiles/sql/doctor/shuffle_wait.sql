-- shuffle_wait: reduces holding their slots while they wait for the last map wave (phaseline).
-- requires: _severity, _job_filter, job_summary
--
-- A reduce that starts before the last map finishes can only copy what exists; the rest of
-- its early time is spent waiting on maps (the slow-start trade-off).  The share of the
-- successful reduces' time spent before the last successful map finished:
--
--   MAP     |--w1--|--w2--|--w3--|            last map finish
--   REDUCE     |~~~~~~~~~~~~~~~~~~|shuf|red|   ~ = waiting: 17 of 26 units -> 0.65
--
-- graded by that share (0.2, 0.4, 0.6, 0.8 by default), capped by the reduces' time it is of the
-- job's (reduce slot time / map slot time 0.1, 0.2, 0.3, 0.5: idle reduces beside long maps cost
-- only if they hold many slots).
--
-- Output columns
--   job_id, level, severity, value (the waiting share), threshold, detail, recommendation, skipped
-- Parameters: $job_id, $wait_share, $slot_share

CREATE OR REPLACE TEMP VIEW doctor_shuffle_wait AS
WITH _last_map AS (
    SELECT job_id, max(finish_ms) AS last_map_ms, sum(finish_ms - start_ms) AS map_ms
    FROM attempts WHERE task_type = 'MAP' AND status = 'SUCCEEDED' AND finish_ms >= start_ms
    GROUP BY job_id
),
_r AS (
    SELECT a.job_id, count(*) AS reduces, sum(a.finish_ms - a.start_ms) AS reduce_ms,
        sum(greatest(0, least(a.finish_ms, m.last_map_ms) - a.start_ms)) AS wait_ms,
        any_value(m.map_ms) AS map_ms
    FROM attempts AS a
    JOIN _last_map AS m ON m.job_id = a.job_id
    WHERE a.task_type = 'REDUCE' AND a.status = 'SUCCEEDED' AND a.finish_ms >= a.start_ms
    GROUP BY a.job_id
)
SELECT j.job_id, r.reduces, r.reduce_ms, r.wait_ms, r.map_ms
FROM job_summary AS j
LEFT JOIN _r AS r ON r.job_id = j.job_id;

SELECT
    job_id,
    wait_ms / nullif(reduce_ms, 0) AS value,
    least(_sev_asc(value, $wait_share), _sev_asc(reduce_ms / nullif(map_ms, 0), $slot_share)) AS level,
    _sev_name(level) AS severity,
    'waiting share >= ' || _limits($wait_share) AS threshold,
    printf('%d reduces: %.1f of their %.1f slot-seconds before the last map finished', reduces, wait_ms / 1000,
           reduce_ms / 1000) AS detail,
    'start the reduces later: raise mapreduce.job.reduce.slowstart.completedmaps towards 0.8-1.0' AS recommendation,
    CASE WHEN reduces IS NULL THEN 'no successful map and reduce with times (a map-only job?)' END AS skipped
FROM doctor_shuffle_wait
WHERE _for_job(job_id, $job_id);
