-- reduce_stages: the spans of each successful reduce the bounds model needs (Verma et al. 2011, ARIA).
-- requires: phases, waves
--
-- ARIA splits a reduce into its shuffle and its reduce phase (sort + reduce +
-- write) and tells the first-wave shuffle, which overlaps the map stage, from
-- the typical shuffle of later waves:
--
--   MAPS     |--------------------------|                last_map_finish_ms
--   REDUCE 1      |shuffle.............................|sort|reduce+write|
--                                        <first_shuffle>
--   REDUCE 2 (wave 2)                                       |shuffle|sort|r+w|
--                                                           <typical>
--
-- Only attempts whose source separates the shuffle (phase 'shuffle') are listed.
--
-- Output columns
--   job_id, attempt_id, wave, start_ms, shuffle_end_ms, finish_ms, last_map_finish_ms
--   first_shuffle_ms    wave 1: shuffle_end_ms - greatest(start_ms, last_map_finish_ms)
--                       (the shuffle not hidden under the maps; 0 if it ended before them)
--   typical_shuffle_ms  later waves: shuffle_end_ms - start_ms (the task's start-up before
--                       its first fetch included, as in wave 1, so that a task is its
--                       shuffle + reduce phase: a log's shuffle starts 7-14 ms after the
--                       attempt, which no stage counted)
--   reduce_phase_ms     finish_ms - shuffle_end_ms
--   reduce_task_ms      finish_ms - start_ms

CREATE OR REPLACE TEMP VIEW reduce_stages AS
WITH _shuffle AS (
    SELECT job_id, attempt_id, max(end_ms) AS shuffle_end_ms
    FROM phases
    WHERE task_type = 'REDUCE' AND status = 'SUCCEEDED' AND phase = 'shuffle'
    GROUP BY job_id, attempt_id
),
_maps AS (
    SELECT job_id, max(finish_ms) AS last_map_finish_ms
    FROM attempts WHERE task_type = 'MAP' AND status = 'SUCCEEDED'
    GROUP BY job_id
)
SELECT
    w.job_id, w.attempt_id, w.wave, w.start_ms, s.shuffle_end_ms, w.finish_ms, m.last_map_finish_ms,
    CASE WHEN w.wave = 1
        THEN greatest(s.shuffle_end_ms - greatest(w.start_ms, coalesce(m.last_map_finish_ms, w.start_ms)), 0)
    END AS first_shuffle_ms,
    CASE WHEN w.wave > 1 THEN s.shuffle_end_ms - w.start_ms END AS typical_shuffle_ms,
    w.finish_ms - s.shuffle_end_ms AS reduce_phase_ms,
    w.finish_ms - w.start_ms AS reduce_task_ms
FROM _attempt_waves AS w
JOIN _shuffle AS s ON s.job_id = w.job_id AND s.attempt_id = w.attempt_id
LEFT JOIN _maps AS m ON m.job_id = w.job_id
WHERE w.task_type = 'REDUCE';

SELECT * FROM reduce_stages WHERE job_id = $job_id ORDER BY start_ms, attempt_id;
