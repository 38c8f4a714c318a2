-- verify_overlaps: the sources of each job several describe (overlapping_sources, its tables
-- folded), in the views' order of preference (the first is kept).
--
-- Output columns
--   job_id, path, format
--   tables      the tables it has rows in, comma-separated
--   other_run   another run under the same job id
--   submit_ms   when it says the job was submitted
--   rows        its rows of the job over those tables
SELECT job_id, path, format, string_agg(table_name, ',' ORDER BY table_name) AS tables,
       any_value(other_run) AS other_run, any_value(submit_ms) AS submit_ms, sum(rows) AS rows
FROM overlapping_sources
GROUP BY job_id, path, format, preference
ORDER BY job_id, preference
