-- How a job's samples mapped to vertices: one row.
--
-- Input: the temporary table _groups (the output of dataflow_sample_groups.sql).
--
-- Output columns (samples): mapped, unmapped (no vertex matched, or no stack), ambiguous (several
--   vertices matched), unattributed (mapped, but to no attempt)
SELECT
  coalesce(sum(samples) FILTER (WHERE status = 'mapped'), 0) AS mapped,
  coalesce(sum(samples) FILTER (WHERE status IN ('unmapped', 'nostack')), 0) AS unmapped,
  coalesce(sum(samples) FILTER (WHERE status = 'ambiguous'), 0) AS ambiguous,
  coalesce(sum(samples) FILTER (WHERE status = 'mapped' AND attempt_id IS NULL), 0) AS unattributed
FROM _groups
