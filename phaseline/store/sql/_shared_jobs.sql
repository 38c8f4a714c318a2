-- _shared_jobs: the jobs that landed sources of different content describe, from sources.job_ids
-- (recorded at ingest), without reading any data.  A step of overlapping_sources, dropped after it.
--
-- Output columns
--   job_id
CREATE TEMP TABLE _shared_jobs AS
SELECT job_id FROM (
    SELECT unnest(job_ids) AS job_id, sha256 FROM raw.sources
    WHERE status IN ('landed', 'partial') AND rows_written > 0
)
GROUP BY job_id HAVING count(DISTINCT sha256) > 1
