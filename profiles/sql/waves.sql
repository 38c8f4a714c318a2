-- waves: the waves of map and reduce attempts of each job.
-- requires: slot_occupancy
--
-- With P the peak number of attempts of a type running at once (the slots the
-- job actually got), the i-th attempt to start (1-based, all statuses, ties by
-- attempt id) belongs to wave ceil(i / P): the first P attempts fill the slots,
-- the next P take them over as they free, and so on (the wave model of Zhang et
-- al. 2013 / Verma et al.'s ARIA, with the measured slot count).  Waves may
-- overlap in time: a slot frees early and the next wave starts while the
-- previous one is still running.
--
--   MAP  |aaaa|cccc|        P = 2 -> a, b wave 1; c, d wave 2
--        |bbbbbb|dddd|      overlap_prev_ms = last finish of wave 1 - first start of wave 2
--
-- Helper view _attempt_waves: job_id, attempt_id, task_type, start_ms, finish_ms, status, slots, wave.
--
-- Output columns
--   job_id, task_type, wave
--   slots               P, the peak concurrency used to cut the waves
--   attempts, succeeded attempts in the wave, and how many of them succeeded
--   first_start_ms, last_start_ms, last_finish_ms
--   span_ms             last_finish_ms - first_start_ms
--   median_dur_ms       median attempt duration in the wave
--   overlap_prev_ms     how long this wave ran alongside the previous one (0 if not at all)

CREATE OR REPLACE TEMP VIEW _attempt_waves AS
WITH _peaks AS (
    SELECT DISTINCT job_id, task_type, peak FROM slot_occupancy
)
SELECT
    a.job_id,
    a.attempt_id,
    a.task_type,
    a.start_ms,
    a.finish_ms,
    a.status,
    coalesce(p.peak, 1) AS slots,
    ((row_number() OVER (PARTITION BY a.job_id, a.task_type ORDER BY a.start_ms, a.attempt_id) - 1)
        // coalesce(p.peak, 1) + 1)::BIGINT AS wave
FROM attempts AS a
-- (no peak: every attempt of the type took 0 ms, held [start, start), and counts as one slot)
LEFT JOIN _peaks AS p ON p.job_id = a.job_id AND p.task_type = a.task_type
WHERE a.task_type IN ('MAP', 'REDUCE')
  AND a.start_ms IS NOT NULL AND a.finish_ms IS NOT NULL AND a.finish_ms >= a.start_ms;

CREATE OR REPLACE TEMP VIEW waves AS
WITH _w AS (
    SELECT
        job_id,
        task_type,
        wave,
        any_value(slots) AS slots,
        count(*) AS attempts,
        count(*) FILTER (WHERE status = 'SUCCEEDED') AS succeeded,
        min(start_ms) AS first_start_ms,
        max(start_ms) AS last_start_ms,
        max(finish_ms) AS last_finish_ms,
        median(finish_ms - start_ms) AS median_dur_ms
    FROM _attempt_waves
    GROUP BY job_id, task_type, wave
)
SELECT
    job_id, task_type, wave, slots, attempts, succeeded,
    first_start_ms, last_start_ms, last_finish_ms,
    last_finish_ms - first_start_ms AS span_ms,
    median_dur_ms,
    greatest(
        coalesce(lag(last_finish_ms) OVER (PARTITION BY job_id, task_type ORDER BY wave) - first_start_ms, 0),
        0
    ) AS overlap_prev_ms
FROM _w;

SELECT * FROM waves WHERE job_id = $job_id ORDER BY task_type, wave;
