-- job_names: how many jobs of the store carry each job name (`phaseline fit` picks its jobs by name).
--
-- Output columns
--   name    the job's name (NULL: a history without one)
--   jobs    jobs of that name

CREATE OR REPLACE TEMP VIEW job_names AS
SELECT name, count(*) AS jobs FROM jobs GROUP BY name;

SELECT name, jobs FROM job_names;
