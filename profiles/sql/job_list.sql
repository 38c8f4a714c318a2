-- job_list: every job of the store, one row each, as `phaseline jobs` lists them.
--
-- Jobs known only from attempts (task logs without a history file) are listed too, as
-- `analyze`, `phases` and `report` know them: their history columns empty, the format that
-- of the files their attempts came from.
--
-- Output columns
--   job_id, name, user, queue, status
--   submit_ms, launch_ms, finish_ms
--   duration_s       (finish - submit, else launch) / 1000: job_summary's makespan_ms where the
--                    history has a finish; NULL where it has none (a cut file), not the span so far
--   total_maps, total_reduces, failed_maps, failed_reduces
--   source_format    the format of the job's history (a job known from attempts: of their files)

CREATE OR REPLACE TEMP VIEW job_list AS
SELECT job_id, name, user, queue, status, submit_ms, launch_ms, finish_ms,
       (finish_ms - coalesce(submit_ms, launch_ms)) / 1000.0 AS duration_s,
       total_maps, total_reduces, failed_maps, failed_reduces, source_format
FROM jobs
UNION ALL BY NAME
SELECT a.job_id, string_agg(DISTINCT s.format, ',' ORDER BY s.format) AS source_format
FROM attempts a LEFT JOIN sources s ON s.sha256 = a.source_sha256
WHERE a.job_id IS NOT NULL AND a.job_id NOT IN (SELECT job_id FROM jobs WHERE job_id IS NOT NULL)
GROUP BY a.job_id;

SELECT * FROM job_list ORDER BY submit_ms NULLS LAST, job_id;
