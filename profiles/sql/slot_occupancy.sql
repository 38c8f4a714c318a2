-- slot_occupancy: how many attempts of each type were running, as a step function of time.
--
-- Every attempt with a start and finish counts (failed and killed ones held a slot
-- too).  An attempt occupies [start_ms, finish_ms); a finish and a start at the
-- same millisecond net out, so back-to-back attempts on one slot do not count twice.
--
-- Output columns
--   job_id, task_type
--   ts_ms        a change point (instants where starts and finishes cancel out are not)
--   until_ms     the next change point (NULL after the last one)
--   running      attempts running during [ts_ms, until_ms)
--   peak         the maximum of running over the job (per task_type)

CREATE OR REPLACE TEMP VIEW slot_occupancy AS
WITH _deltas AS (
    SELECT job_id, task_type, start_ms AS ts_ms, 1 AS delta
    FROM attempts WHERE start_ms IS NOT NULL AND finish_ms IS NOT NULL AND finish_ms >= start_ms
    UNION ALL
    SELECT job_id, task_type, finish_ms AS ts_ms, -1 AS delta
    FROM attempts WHERE start_ms IS NOT NULL AND finish_ms IS NOT NULL AND finish_ms >= start_ms
),
_steps AS (
    SELECT job_id, task_type, ts_ms, sum(delta) AS delta
    FROM _deltas
    GROUP BY ALL
    HAVING sum(delta) <> 0
),
_running AS (
    SELECT
        job_id,
        task_type,
        ts_ms,
        lead(ts_ms) OVER (PARTITION BY job_id, task_type ORDER BY ts_ms) AS until_ms,
        sum(delta) OVER (PARTITION BY job_id, task_type ORDER BY ts_ms)::BIGINT AS running
    FROM _steps
)
SELECT *, max(running) OVER (PARTITION BY job_id, task_type) AS peak
FROM _running;

SELECT * FROM slot_occupancy WHERE job_id = $job_id ORDER BY task_type, ts_ms;
