-- attempt_concurrency: how many of its job's attempts ran on an attempt's host while it ran, on average.
--
-- Every attempt with a start and finish counts (all types and statuses: a failed or killed attempt
-- held its container's CPU too).  An attempt's concurrency is the time-weighted mean of the number
-- of the job's attempts running on its host over [start_ms, finish_ms), itself included: 1 for an
-- attempt that ran alone, 3 for one that always had two others beside it.  Where a node's task
-- JVMs outnumber its cores they share them, and the attempt ran slower by that much
-- (predict/contention.py).
--
--   host h  |a..........|c......|      a: 2 attempts for 6 of its 12 ms, then 1 -> 1.5
--           |b.....|                   b: 2 throughout -> 2.0;  c: alone -> 1.0
--
-- The mean is an integral read off the host's step function of running attempts: with A(t) its
-- area from the host's first change point to t, an attempt's mean is (A(finish) - A(start)) /
-- (finish - start), every start and finish being a change point.
--
-- Output columns (the view also has job_id)
--   attempt_id, task_type, status, host
--   start_ms, finish_ms
--   concurrency   the mean number of the job's attempts running on the host meanwhile (NULL for an
--                 attempt of no duration)

CREATE OR REPLACE TEMP VIEW attempt_concurrency AS
WITH _timed AS (
    SELECT job_id, attempt_id, task_type, status, coalesce(host, '') AS host, start_ms, finish_ms
    FROM attempts
    WHERE start_ms IS NOT NULL AND finish_ms IS NOT NULL AND finish_ms >= start_ms
),
_deltas AS (
    SELECT job_id, host, start_ms AS ts_ms, 1 AS delta FROM _timed
    UNION ALL
    SELECT job_id, host, finish_ms AS ts_ms, -1 AS delta FROM _timed
),
_steps AS (  -- every start and finish stays a point, also where they net out
    SELECT job_id, host, ts_ms, sum(delta) AS delta FROM _deltas GROUP BY ALL
),
_running AS (
    SELECT
        job_id, host, ts_ms,
        lead(ts_ms) OVER (PARTITION BY job_id, host ORDER BY ts_ms) AS until_ms,
        sum(delta) OVER (PARTITION BY job_id, host ORDER BY ts_ms) AS running
    FROM _steps
),
_area AS (  -- A(ts_ms): the integral of running up to this point
    SELECT
        job_id, host, ts_ms,
        coalesce(sum(running * (until_ms - ts_ms)) OVER (
            PARTITION BY job_id, host ORDER BY ts_ms ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ), 0) AS area
    FROM _running
)
SELECT
    t.job_id, t.attempt_id, t.task_type, t.status, t.host, t.start_ms, t.finish_ms,
    CASE WHEN t.finish_ms > t.start_ms
         THEN (f.area - s.area)::DOUBLE / (t.finish_ms - t.start_ms) END AS concurrency
FROM _timed AS t
JOIN _area AS s ON s.job_id = t.job_id AND s.host = t.host AND s.ts_ms = t.start_ms
JOIN _area AS f ON f.job_id = t.job_id AND f.host = t.host AND f.ts_ms = t.finish_ms;

SELECT attempt_id, task_type, status, host, start_ms, finish_ms, concurrency
FROM attempt_concurrency
WHERE job_id = $job_id
ORDER BY start_ms, attempt_id;
