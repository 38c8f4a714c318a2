-- map_spills: maps that spill their sort buffer many times (phaseline; the spill count is in the task logs).
-- requires: _severity, _job_filter, _job_spills
--
-- Dr. Elephant sees only the spilled-record ratio (mapper_spill), which stays near 2 however many
-- spills a map makes; the task logs count them.  Each spill past the first sorts and writes a run
-- the merge reads back.  Graded by the mean spills per map (2, 4, 8, 16 by default).
--
-- Output columns
--   job_id, level, severity, value (mean spills per map), threshold, detail, recommendation, skipped
-- Parameters: $job_id, $spills

SELECT
    job_id,
    spills AS value,
    _sev_asc(spills, $spills) AS level,
    _sev_name(level) AS severity,
    'spills per map >= ' || _limits($spills) AS threshold,
    printf('%d maps: %.1f spills each (up to %d) with a %g MB sort buffer', maps, spills, max_spills, io_sort_mb) AS detail,
    printf('raise mapreduce.task.io.sort.mb from %g MB so a map''s output fits in one or two spills', io_sort_mb) AS recommendation,
    CASE WHEN maps IS NULL THEN 'no task log with the maps'' spills (spill counts come from MapTask logs)' END AS skipped
FROM _job_spills
WHERE _for_job(job_id, $job_id);
