-- timeline: every attempt of every job (successful, failed, killed, speculative).
--
-- Output columns
--   job_id, task_id, attempt_id, task_type, status
--   start_ms, finish_ms       epoch milliseconds (NULL where the source lacks them)
--   dur_ms                    finish_ms - start_ms; NULL when either is missing or the finish
--                             precedes the start (a trace whose clocks disagree: mumak's Rumen
--                             trace has failed reduces that end 80 s before they start); the
--                             times themselves are kept as the trace has them
--   t0_ms                     the job's time zero: submit time, else its first attempt start
--   rel_start_ms, rel_finish_ms   start_ms/finish_ms - t0_ms
--   host, rack, container_id, locality
--   attempt_no                the attempt's ordinal within its task (1 = first started)
--   speculative               TRUE when an earlier attempt of the same task was still running
--                             at this attempt's start (a speculative or duplicate attempt)
--   error                     the attempt's diagnostic, if any
-- The slot (lane on a host) is assigned in Python (profiles.slots.assign_slots):
-- first-fit interval colouring is sequential and does not belong in SQL.

CREATE OR REPLACE TEMP VIEW timeline AS
WITH _t0 AS (
    SELECT a.job_id, coalesce(min(j.submit_ms), min(j.launch_ms), min(a.start_ms)) AS t0_ms
    FROM attempts AS a
    LEFT JOIN jobs AS j ON j.job_id = a.job_id
    GROUP BY a.job_id
)
-- every window and group is by job, so a one-job query reads that job's attempts only
SELECT
    a.job_id,
    a.task_id,
    a.attempt_id,
    a.task_type,
    a.status,
    a.start_ms,
    a.finish_ms,
    CASE WHEN a.finish_ms >= a.start_ms THEN a.finish_ms - a.start_ms END AS dur_ms,
    t.t0_ms,
    a.start_ms - t.t0_ms AS rel_start_ms,
    a.finish_ms - t.t0_ms AS rel_finish_ms,
    a.host,
    a.rack,
    a.container_id,
    a.locality,
    row_number() OVER w AS attempt_no,
    coalesce(max(a.finish_ms) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) > a.start_ms, FALSE)
        AS speculative,
    a.error
FROM attempts AS a
JOIN _t0 AS t ON t.job_id = a.job_id
WINDOW w AS (PARTITION BY a.job_id, a.task_id ORDER BY a.start_ms NULLS LAST, a.attempt_id, a.source_sha256);

SELECT * FROM timeline
WHERE job_id = $job_id
ORDER BY start_ms NULLS LAST, attempt_id;
