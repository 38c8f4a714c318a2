-- map_task_waves: every successful map attempt with its wave, for telling one-time from per-task cost.
-- requires: waves
--
-- A map's wave is the one waves.sql cuts (the i-th attempt to start is in wave
-- ceil(i / P), P the peak number of maps running at once).  The first wave pays
-- what later waves inherit (Verma et al. 2011, ARIA, tell a first-wave shuffle
-- from a typical one for the same reason): on a cluster, container localisation
-- and a cold JVM; on one JVM, class loading and JIT.
--
--   MAP  |a..........|c...|e...|     P = 2: a, b wave 1 (a paid the one-time cost)
--        |b...|d...|f...|            c, d wave 2 ... (typical)
--
-- Output columns (the view also has job_id)
--   attempt_id
--   wave        1-based wave of the attempt (among all the job's map attempts)
--   slots       P, the peak concurrency the waves were cut with
--   start_ms
--   dur_ms      finish_ms - start_ms


CREATE OR REPLACE TEMP VIEW map_task_waves AS
SELECT job_id, attempt_id, wave, slots, start_ms, finish_ms - start_ms AS dur_ms
FROM _attempt_waves
WHERE task_type = 'MAP' AND status = 'SUCCEEDED';

SELECT attempt_id, wave, slots, start_ms, dur_ms
FROM map_task_waves
WHERE job_id = $job_id
ORDER BY start_ms, attempt_id;
