-- shuffle_gap: the gap between the end of the last map and the end of the last shuffle (HiTune Fig. 16).
-- requires: phases
--
-- Ideally every shuffle ends as soon as the last map output exists; Dai et al.
-- 2011 (section 7.2) found a gap of about 15% of the job time in TeraSort, caused
-- by copier threads waiting on in-memory merges.  Only successful attempts count,
-- and only attempts whose source separates the shuffle (phase = 'shuffle').
--
--   MAP     |----|  |------|                    last_map_finish_ms
--   REDUCE    |-shuffle------------|sort|red|   last_shuffle_end_ms
--                           <-gap->
--
-- Output columns
--   job_id
--   last_map_finish_ms     latest finish of a successful map attempt
--   last_shuffle_end_ms    latest end of a successful reduce attempt's shuffle
--   gap_ms                 last_shuffle_end_ms - last_map_finish_ms
--   job_span_ms            the job's span (submit, else first start, to finish, else last finish)
--   gap_share              gap_ms / job_span_ms

CREATE OR REPLACE TEMP VIEW shuffle_gap AS
WITH _maps AS (
    SELECT job_id, max(finish_ms) AS last_map_finish_ms
    FROM attempts WHERE task_type = 'MAP' AND status = 'SUCCEEDED'
    GROUP BY job_id
),
_shuffles AS (
    SELECT job_id, max(end_ms) AS last_shuffle_end_ms
    FROM phases WHERE task_type = 'REDUCE' AND status = 'SUCCEEDED' AND phase = 'shuffle'
    GROUP BY job_id
),
_span AS (
    SELECT a.job_id,
        coalesce(max(j.finish_ms), max(a.finish_ms))
            - coalesce(min(j.submit_ms), min(j.launch_ms), min(a.start_ms)) AS job_span_ms
    FROM attempts AS a LEFT JOIN jobs AS j ON j.job_id = a.job_id
    GROUP BY a.job_id
)
SELECT
    m.job_id,
    m.last_map_finish_ms,
    s.last_shuffle_end_ms,
    s.last_shuffle_end_ms - m.last_map_finish_ms AS gap_ms,
    p.job_span_ms,
    CASE WHEN p.job_span_ms > 0 THEN (s.last_shuffle_end_ms - m.last_map_finish_ms) / p.job_span_ms END
        AS gap_share
FROM _maps AS m
JOIN _shuffles AS s ON s.job_id = m.job_id
LEFT JOIN _span AS p ON p.job_id = m.job_id;

SELECT * FROM shuffle_gap WHERE job_id = $job_id;
