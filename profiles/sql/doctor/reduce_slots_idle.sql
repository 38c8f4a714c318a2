-- reduce_slots_idle: too few reduces for the reduce slots, which stand idle through the reduce stage (phaseline).
-- requires: _severity, _job_filter, job_summary, job_conf
--
-- The reduce slots are the job's configured ones where it says (mapreduce.local.reduce.tasks.maximum
-- for the local runner) and else the peak number of reduces that ran at once.  The idle share is
-- 1 - (reduce slot time used) / (slots x the reduce stage's span), the stage running from the
-- first reduce start to the last reduce finish:
--
--   slots = 4   |==r0==========|          one reduce on four slots: 3/4 idle
--               |..............|
--
-- graded by that share (0.15, 0.3, 0.5, 0.75 by default: half the slots idle is Severe), capped by the reduce stage's share of
-- the job's span (0.1, 0.2, 0.3, 0.5): idle slots in a short stage cost little.
--
-- Output columns
--   job_id, level, severity, value (the idle share), threshold, detail, recommendation, skipped
-- Parameters: $job_id, $idle_share, $stage_share

CREATE OR REPLACE TEMP VIEW doctor_reduce_slots_idle AS
WITH _r AS (
    SELECT job_id, count(*) AS reduces, min(start_ms) AS first_ms, max(finish_ms) AS last_ms,
        sum(finish_ms - start_ms) AS busy_ms
    FROM attempts
    WHERE task_type = 'REDUCE' AND status = 'SUCCEEDED' AND finish_ms >= start_ms
    GROUP BY job_id
),
_peak AS (  -- the most reduce attempts running at once (a finish at a start's millisecond frees first)
    SELECT job_id, max(running) AS peak
    FROM (
        SELECT job_id, sum(d) OVER (PARTITION BY job_id ORDER BY t, d ROWS UNBOUNDED PRECEDING) AS running
        FROM (
            SELECT job_id, start_ms AS t, 1 AS d FROM attempts
            WHERE task_type = 'REDUCE' AND start_ms IS NOT NULL AND finish_ms >= start_ms
            UNION ALL
            SELECT job_id, finish_ms, -1 FROM attempts
            WHERE task_type = 'REDUCE' AND start_ms IS NOT NULL AND finish_ms >= start_ms
        )
    )
    GROUP BY job_id
),
_conf AS (
    SELECT job_id, max(TRY_CAST(value AS INTEGER)) AS slots
    FROM job_conf WHERE key = 'mapreduce.local.reduce.tasks.maximum'
    GROUP BY job_id
)
SELECT j.job_id, r.reduces, r.busy_ms, r.last_ms - r.first_ms AS stage_ms, j.makespan_ms,
    coalesce(CASE WHEN c.slots > 0 THEN c.slots END, p.peak) AS slots,
    c.slots IS NOT NULL AND c.slots > 0 AS configured
FROM job_summary AS j
LEFT JOIN _r AS r ON r.job_id = j.job_id
LEFT JOIN _peak AS p ON p.job_id = j.job_id
LEFT JOIN _conf AS c ON c.job_id = j.job_id;

SELECT
    job_id,
    1 - busy_ms / nullif(slots * stage_ms, 0) AS value,
    least(_sev_asc(value, $idle_share), _sev_asc(stage_ms / nullif(makespan_ms, 0), $stage_share)) AS level,
    _sev_name(level) AS severity,
    'idle share >= ' || _limits($idle_share) AS threshold,
    printf('%d reduce(s) on %d slot(s) (%s) for %.1f s, %.0f %% of the job', reduces, slots,
           CASE WHEN configured THEN 'configured' ELSE 'the most that ran at once' END, stage_ms / 1000,
           100 * stage_ms / nullif(makespan_ms, 0)) AS detail,
    printf('set mapreduce.job.reduces to a multiple of the %d reduce slots', slots) AS recommendation,
    CASE WHEN reduces IS NULL THEN 'no successful reduce with times (a map-only job?)'
         WHEN stage_ms = 0 THEN 'the reduce stage took no time' END AS skipped
FROM doctor_reduce_slots_idle
WHERE _for_job(job_id, $job_id);
