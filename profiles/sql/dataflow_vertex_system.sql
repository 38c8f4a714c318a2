-- System samples associated with the vertex instances they overlap (HiTune, Dai
-- et al. 2011, section 5.3): per vertex instance and metric, the mean of the
-- system samples of its host (or host-less samples, e.g. a local JFR recording's
-- CPU load) taken during its span.
-- Instances: one source per job, never both added together: the reconstructed ones
--   (source 'reconstruct', `phaseline dataflow`) when the job has them, else HiTune's
--   own (source 'hitune_csv', from its CSV reports).
-- Parameters: $job_id.
-- Output columns: attempt_id, thread_id, vertex, host, start_ms, end_ms, metric,
--   device, samples, mean_value
WITH vi AS (  -- one source of instances per job (dataflow_job_instances.sql)
    SELECT * FROM _job_instances($job_id)
)
SELECT vi.attempt_id, vi.thread_id, vi.vertex, vi.host, vi.start_ms, vi.end_ms,
       ss.metric, ss.device, count(*) AS samples, round(avg(ss.value), 4) AS mean_value
FROM vi
JOIN system_samples ss
  ON ss.ts_ms BETWEEN vi.start_ms AND vi.end_ms
 AND (ss.host IS NULL OR vi.host IS NULL OR ss.host = vi.host)
GROUP BY ALL
ORDER BY vi.start_ms, vi.attempt_id, vi.thread_id, ss.metric, ss.device
