-- _drop_steps: drop the temporary tables overlapping_sources was built from (steps, not relations for users).
DROP TABLE _per_job;
DROP TABLE IF EXISTS _shared_jobs
