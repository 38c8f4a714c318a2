-- _shared_job_count: how many jobs _shared_jobs holds (none: no table can overlap).
--
-- Output columns
--   n
SELECT count(*) AS n FROM _shared_jobs
