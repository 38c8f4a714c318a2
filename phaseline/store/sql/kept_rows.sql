-- kept_rows: a table's rows that one store's views keep of the jobs several of its sources
-- describe (its one account of them), for a partitioned store's root views.
-- Parameters: $table_name (the table, as {{table}} names it).
SELECT * FROM main.{{table}}
WHERE job_id IN (SELECT job_id FROM overlapping_sources WHERE table_name = $table_name)
