-- slot_handover: how long a freed slot stood idle before the next attempt of its type took it.
-- requires: slot_occupancy
--
-- A scheduler hands a freed slot the next pending task only at its next turn: a Hadoop 1
-- JobTracker on the TaskTracker's next heartbeat (3 s by default), a YARN ApplicationMaster once
-- the ResourceManager grants it the container again and the NodeManager launches it (their 1 s
-- heartbeats).  Meanwhile the slot runs nothing, a wait no task's duration holds.  With P the
-- peak number of attempts of a type running at once (the slots the job got, as waves.sql cuts
-- the waves), the j-th attempt to finish frees the slot that the (P + j)-th attempt to start
-- takes; the handover is the time between the two, 0 where the start came first:
--
--   MAP  |aaaa|  |cccc|        P = 2: a frees the slot c takes (handover 1), b the one d takes
--        |bbbbbb|   |dddd|
--             <->  <->         the handovers
--
-- On the LocalJobRunner a thread pool hands a freed thread the next map at once (0 ms).
--
-- Output columns (the view: one row per handover)
--   job_id, task_type
--   slots        P
--   handover     j, the finish that freed the slot (1-based)
--   freed_ms     the j-th finish
--   taken_ms     the (P + j)-th start
--   gap_ms       greatest(taken_ms - freed_ms, 0)
-- The query, per task type of $job_id: task_type, handover_ms (the median gap), handovers

CREATE OR REPLACE TEMP VIEW slot_handover AS
WITH _timed AS (
    SELECT job_id, task_type, start_ms, finish_ms
    FROM attempts
    WHERE task_type IN ('MAP', 'REDUCE')
      AND start_ms IS NOT NULL AND finish_ms IS NOT NULL AND finish_ms >= start_ms
),
_peaks AS (
    SELECT DISTINCT job_id, task_type, peak FROM slot_occupancy
),
_starts AS (
    SELECT job_id, task_type, start_ms,
        row_number() OVER (PARTITION BY job_id, task_type ORDER BY start_ms) AS i
    FROM _timed
),
_finishes AS (
    SELECT job_id, task_type, finish_ms,
        row_number() OVER (PARTITION BY job_id, task_type ORDER BY finish_ms) AS j
    FROM _timed
)
SELECT
    s.job_id,
    s.task_type,
    p.peak AS slots,
    f.j AS handover,
    f.finish_ms AS freed_ms,
    s.start_ms AS taken_ms,
    greatest(s.start_ms - f.finish_ms, 0) AS gap_ms
FROM _starts AS s
JOIN _peaks AS p ON p.job_id = s.job_id AND p.task_type = s.task_type
JOIN _finishes AS f ON f.job_id = s.job_id AND f.task_type = s.task_type AND s.i = f.j + p.peak;

SELECT task_type, median(gap_ms)::DOUBLE AS handover_ms, count(*) AS handovers
FROM slot_handover
WHERE job_id = $job_id
GROUP BY task_type
ORDER BY task_type;
