-- skew_hosts: per-host normalized durations of successful attempts and their phases (HiTune Fig. 20).
-- requires: _phase_durations
--
-- Dai et al. 2011 (section 7.3, Figure 20) group the reduce stages by TaskTracker
-- and divide each host's average running time by the average over all hosts;
-- hosts 3 and 7 stood out at 1.20 and 1.14 and had slow disks.  Here for every
-- task type and phase (phase = 'attempt' for whole attempts).
--
-- Output columns
--   job_id, task_type, phase, host
--   attempts          successful attempts of this type on this host (with this phase)
--   avg_dur_ms        their mean duration
--   job_avg_dur_ms    mean over all successful attempts of the type/phase in the job
--   normalized_dur    avg_dur_ms / job_avg_dur_ms (1.0 = average host)
--   slower_pct        (normalized_dur - 1) * 100

CREATE OR REPLACE TEMP VIEW skew_hosts AS
WITH _ok AS NOT MATERIALIZED (
    SELECT * FROM _phase_durations WHERE status = 'SUCCEEDED'
),
_job AS (
    SELECT job_id, task_type, phase, avg(dur_ms) AS job_avg_dur_ms
    FROM _ok GROUP BY job_id, task_type, phase
),
_host AS (
    SELECT job_id, task_type, phase, host, count(*) AS attempts, avg(dur_ms) AS avg_dur_ms
    FROM _ok GROUP BY job_id, task_type, phase, host
)
SELECT
    h.job_id, h.task_type, h.phase, h.host, h.attempts, h.avg_dur_ms, j.job_avg_dur_ms,
    CASE WHEN j.job_avg_dur_ms > 0 THEN h.avg_dur_ms / j.job_avg_dur_ms END AS normalized_dur,
    CASE WHEN j.job_avg_dur_ms > 0 THEN (h.avg_dur_ms / j.job_avg_dur_ms - 1) * 100 END AS slower_pct
FROM _host AS h
JOIN _job AS j ON j.job_id = h.job_id AND j.task_type = h.task_type AND j.phase = h.phase;

SELECT * FROM skew_hosts
WHERE job_id = $job_id
ORDER BY task_type, phase, normalized_dur DESC NULLS LAST, host;
