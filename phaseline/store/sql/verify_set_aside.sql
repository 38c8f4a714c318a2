-- verify_set_aside: per job several sources describe in one table, the rows of that table the
-- views leave out (raw rows minus view rows).
-- Parameters: $table_name (the table, as {{table}} names it).
--
-- Output columns
--   job_id, set_aside
WITH overlapping AS (SELECT job_id FROM overlapping_sources WHERE table_name = $table_name)
SELECT job_id, r.n - coalesce(m.n, 0) AS set_aside
FROM (SELECT job_id, count(*) AS n FROM raw.{{table}} WHERE job_id IN (SELECT job_id FROM overlapping) GROUP BY job_id) AS r
LEFT JOIN (SELECT job_id, count(*) AS n FROM main.{{table}} WHERE job_id IN (SELECT job_id FROM overlapping) GROUP BY job_id) AS m
USING (job_id)
