-- _per_job_rows_of_shared_jobs: one table's rows per job and source, only the jobs of _shared_jobs
-- (a filter DuckDB pushes into the scan: the other jobs' rows are not counted).
-- Parameters: $table_name (the table, as {{table}} names it).
INSERT INTO _per_job
SELECT $table_name, job_id, source_sha256, count(*)
FROM raw.{{table}} WHERE job_id IS NOT NULL AND job_id IN (SELECT job_id FROM _shared_jobs) GROUP BY ALL
