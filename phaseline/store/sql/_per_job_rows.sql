-- _per_job_rows: one table's rows per job and source, every job (some source does not list its jobs).
-- Parameters: $table_name (the table, as {{table}} names it).
INSERT INTO _per_job
SELECT $table_name, job_id, source_sha256, count(*)
FROM raw.{{table}} WHERE job_id IS NOT NULL GROUP BY ALL
