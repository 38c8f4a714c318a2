-- sources_without_job_ids: how many landed sources do not list their jobs (ingested before
-- sources.job_ids existed); with any, overlaps are counted over every job's rows.
--
-- Output columns
--   n    the number of such sources
SELECT count(*) AS n FROM raw.sources
WHERE status IN ('landed', 'partial') AND rows_written > 0 AND job_ids IS NULL
