-- _per_job: rows per (table, job, source) of the tables several sources have rows in; filled by
-- _per_job_rows (or _per_job_rows_of_shared_jobs) once per table.  A step of overlapping_sources.
--
-- Output columns
--   table_name, job_id, source_sha256, rows
CREATE TEMP TABLE _per_job (table_name VARCHAR, job_id VARCHAR, source_sha256 VARCHAR, rows BIGINT)
