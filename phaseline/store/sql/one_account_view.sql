-- one_account_view: a table's view keeping, per unit of a job several sources describe, the
-- preferred source's rows (overlapping_sources.preference); other jobs keep every row.
--
-- A stand-in source (derived, or with more successful tasks than its own job total) stands in for
-- a job only where no other source has rows of the table for it: it never adds units (an
-- attempt, a counter set) to another source's account of the same job.  A source of another run
-- under the same job id (other_run) adds nothing at all.
--
-- A view's definition takes no bound parameters: {{table_name}} is the declared table's name.
CREATE VIEW main.{{table}} AS
SELECT r.* FROM raw.{{table}} AS r
WHERE NOT EXISTS (
    SELECT 1 FROM overlapping_sources AS o WHERE o.table_name = {{table_name}} AND o.job_id = r.job_id
)
UNION ALL
SELECT r.* FROM raw.{{table}} AS r
JOIN overlapping_sources AS o
  ON o.table_name = {{table_name}} AND o.job_id = r.job_id AND o.source_sha256 = r.source_sha256
WHERE NOT o.other_run
QUALIFY o.preference = min(o.preference) OVER (PARTITION BY {{unit}})
    AND (NOT o.stand_in OR bool_and(o.stand_in) OVER (PARTITION BY r.job_id))
