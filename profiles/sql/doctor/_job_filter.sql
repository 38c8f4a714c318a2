-- _job_filter: which jobs a doctor query answers for, written once.
--
-- Every heuristic's query takes $job_id: one job's id, or NULL for every job of the store (the
-- doctor grades many jobs with one query each: profiles/doctor.py, diagnose_together).
--
--   _for_job(job_id, 'job_1_0001')   true for that job's rows only
--   _for_job(job_id, NULL)           true for every row
--
-- A macro is expanded where it is used, so DuckDB pushes `job_id = $job_id` into the Parquet scans
-- as it did when each file spelled the condition out.

CREATE OR REPLACE TEMP MACRO _for_job(id, wanted) AS wanted IS NULL OR id = wanted;
