-- One vertex's instances grouped by host, normalized (HiTune, Dai et al. 2011,
-- Figure 20: "normalized average running time and busy vs. idle breakdown of
-- reduce stages grouped by TaskTracker").  A host whose instances run longer than
-- the average with the same busy time but more idle time points at a slow device.
-- Instances: one source per job, never both added together: the reconstructed ones
--   (source 'reconstruct', `phaseline dataflow`) when the job has them, else HiTune's
--   own (source 'hitune_csv', from its CSV reports).
-- Parameters: $job_id, $vertex.
-- Output columns: host, instances, avg_ms, norm_time (avg_ms / mean over all
--   instances), avg_busy, avg_idle (samples per instance), norm_busy, norm_idle
--   (divided by the mean samples per instance over all hosts), idle_pct
WITH vi AS (  -- one source of instances per job (dataflow_job_instances.sql)
    SELECT * FROM _job_instances($job_id)
),
inst AS (
    SELECT host, end_ms - start_ms AS dur_ms, busy_samples, idle_samples
    FROM vi
    WHERE vertex = $vertex
),
overall AS (
    SELECT avg(dur_ms) AS avg_ms, avg(busy_samples + idle_samples) AS avg_samples FROM inst
)
SELECT
    i.host,
    count(*) AS instances,
    round(avg(i.dur_ms), 1) AS avg_ms,
    round(avg(i.dur_ms) / nullif(any_value(o.avg_ms), 0), 4) AS norm_time,
    round(avg(i.busy_samples), 1) AS avg_busy,
    round(avg(i.idle_samples), 1) AS avg_idle,
    round(avg(i.busy_samples) / nullif(any_value(o.avg_samples), 0), 4) AS norm_busy,
    round(avg(i.idle_samples) / nullif(any_value(o.avg_samples), 0), 4) AS norm_idle,
    round(100.0 * sum(i.idle_samples) / nullif(sum(i.busy_samples + i.idle_samples), 0), 2) AS idle_pct
FROM inst i CROSS JOIN overall o
GROUP BY i.host
ORDER BY i.host
