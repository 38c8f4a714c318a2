-- merge_passes: map-side merges that take extra passes because the sort factor is small (phaseline).
-- requires: _severity, _job_filter, _job_spills
--
-- With n spills and sort factor f a map merges its runs in ceil((n - 1) / (f - 1)) rounds; all
-- but the last read and write the data once more (Herodotou 2011, eqs. 16-18).  Graded by the
-- mean extra passes per map (1, 2, 4, 8 by default).
--
-- Output columns
--   job_id, level, severity, value (mean extra merge passes per map), threshold, detail, recommendation, skipped
-- Parameters: $job_id, $passes

SELECT
    job_id,
    passes AS value,
    _sev_asc(passes, $passes) AS level,
    _sev_name(level) AS severity,
    'extra passes per map >= ' || _limits($passes) AS threshold,
    printf('%d maps: %.1f spills each merged %d at a time: %.1f extra pass(es)', maps, spills, sort_factor, passes) AS detail,
    printf('raise mapreduce.task.io.sort.factor from %d to at least the spills per map (%.0f), or spill less (a larger io.sort.mb)',
           sort_factor, ceil(spills)) AS recommendation,
    CASE WHEN maps IS NULL THEN 'no task log with the maps'' spills (spill counts come from MapTask logs)' END AS skipped
FROM _job_spills
WHERE _for_job(job_id, $job_id);
