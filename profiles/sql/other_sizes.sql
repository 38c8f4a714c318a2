-- other_sizes: the store's other successful runs of a job (the same job name) whose input is of
-- another size: a profile of one size cannot tell a job's fixed cost from its cost per byte, and
-- merged with one of these (`phaseline profile JOB OTHER`) it can (profiles.task_costs).
-- requires: counter_totals
--
-- A size is the job's map input records (counted the same way on every engine; bytes read are
-- not: LocalJobRunner's map threads share one file system's statistics).  Sizes within 2 % of
-- the job's are repeats of its case, not another size.
--
-- Output columns
--   job_id               the other run
--   map_input_records    its input, in records
--   ratio                its input over the job's

CREATE OR REPLACE TEMP VIEW other_sizes AS
WITH sized AS (
    SELECT j.job_id, j.name, j.status, t.map_input_records
    FROM jobs AS j
    JOIN counter_totals AS t ON t.job_id = j.job_id AND t.task_type = 'MAP'
    WHERE t.map_input_records > 0
)
SELECT base.job_id AS of_job, o.job_id, o.map_input_records,
    o.map_input_records / base.map_input_records AS ratio
FROM sized AS base
JOIN sized AS o ON o.name = base.name AND o.job_id <> base.job_id
WHERE o.status = 'SUCCEEDED'
  AND abs(o.map_input_records - base.map_input_records) > 0.02 * base.map_input_records;

SELECT job_id, map_input_records, ratio FROM other_sizes WHERE of_job = $job_id ORDER BY map_input_records, job_id;
