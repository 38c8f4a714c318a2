-- _job_spills: per job, its maps' spills and merge passes as _map_spills counts them (map_spills and
-- merge_passes grade them).
-- requires: _map_spills, job_summary
--
-- Every job has a row; maps is NULL where no task log counted a map's spills (the heuristics then
-- say why they are skipped).
--
-- Output columns
--   job_id
--   maps                  successful maps with their spills counted
--   spills, max_spills    mean and most spills per map
--   passes                mean extra merge passes per map (_map_spills.merge_passes)
--   io_sort_mb, sort_factor   the job's sort settings

CREATE OR REPLACE TEMP VIEW _job_spills AS
WITH _t AS (
    SELECT job_id, count(*) AS maps, avg(spills) AS spills, max(spills) AS max_spills,
        avg(merge_passes) AS passes, any_value(io_sort_mb) AS io_sort_mb, any_value(sort_factor) AS sort_factor
    FROM _map_spills GROUP BY job_id
)
SELECT j.job_id, t.maps, t.spills, t.max_spills, t.passes, t.io_sort_mb, t.sort_factor
FROM job_summary AS j
LEFT JOIN _t AS t ON t.job_id = j.job_id;
