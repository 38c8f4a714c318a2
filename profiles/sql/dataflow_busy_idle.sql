-- Busy vs idle per dataflow vertex (HiTune, Dai et al. 2011, Figure 17): from the
-- job's vertex instances, the share of samples in which the vertex's threads ran
-- (RUNNABLE) or waited (BLOCKED / WAITING / TIMED_WAITING).
-- Instances: one source per job, never both added together: the reconstructed ones
--   (source 'reconstruct', `phaseline dataflow`) when the job has them, else HiTune's
--   own (source 'hitune_csv', from its CSV reports).
-- Parameters: $job_id.
-- Output columns: vertex, instances, samples, busy_samples, idle_samples,
--   busy_pct, idle_pct (of busy + idle), avg_ms (mean instance span)
WITH vi AS (  -- one source of instances per job (dataflow_job_instances.sql)
    SELECT * FROM _job_instances($job_id)
)
SELECT
    vertex,
    count(*) AS instances,
    sum(samples) AS samples,
    sum(busy_samples) AS busy_samples,
    sum(idle_samples) AS idle_samples,
    round(100.0 * sum(busy_samples) / nullif(sum(busy_samples) + sum(idle_samples), 0), 2) AS busy_pct,
    round(100.0 * sum(idle_samples) / nullif(sum(busy_samples) + sum(idle_samples), 0), 2) AS idle_pct,
    round(avg(end_ms - start_ms), 1) AS avg_ms
FROM vi
GROUP BY vertex
ORDER BY min(start_ms), vertex
