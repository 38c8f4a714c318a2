-- mapper_spill: maps writing each output record to disk more than once (Dr. Elephant's Mapper Spill).
-- requires: _severity, _job_filter, _doctor_tasks, job_summary
--
-- Dr. Elephant (MapperSpillHeuristic.java, HeuristicConf.xml) grades the ratio of SPILLED_RECORDS
-- to MAP_OUTPUT_RECORDS over all maps (2.01, 2.2, 2.5, 3: one spill writes each record once, the
-- merge of several spills once more), capped by the number of maps (50, 100, 500, 1000).
--
-- Output columns
--   job_id, level, severity, value (spilled / output records), threshold, detail, recommendation, skipped
-- Parameters: $job_id, $spill_ratio, $num_tasks

CREATE OR REPLACE TEMP VIEW doctor_mapper_spill AS
WITH _t AS (
    SELECT job_id, count(*) AS tasks, sum(spilled_records) AS spilled_records,
        sum(map_output_records) AS output_records
    FROM _doctor_tasks
    WHERE task_type = 'MAP' AND spilled_records IS NOT NULL AND map_output_records IS NOT NULL
    GROUP BY job_id
)
SELECT j.job_id, t.tasks, t.spilled_records, t.output_records,
    t.spilled_records / nullif(t.output_records, 0) AS spill_ratio
FROM job_summary AS j
LEFT JOIN _t AS t ON t.job_id = j.job_id;

SELECT
    job_id,
    spill_ratio AS value,
    least(_sev_asc(spill_ratio, $spill_ratio), _sev_asc(tasks, $num_tasks)) AS level,
    _sev_name(level) AS severity,
    'spilled / output >= ' || _limits($spill_ratio) AS threshold,
    printf('%d maps: %d records spilled for %d output (%.2fx)', tasks, spilled_records, output_records,
           spill_ratio) AS detail,
    'a larger sort buffer (mapreduce.task.io.sort.mb) or a later spill (mapreduce.map.sort.spill.percent), so each map spills once' AS recommendation,
    CASE WHEN tasks IS NULL THEN 'no map with SPILLED_RECORDS and MAP_OUTPUT_RECORDS counters'
         WHEN spill_ratio IS NULL THEN 'the maps wrote no output records (a map-only job or a Sleep job)' END AS skipped
FROM doctor_mapper_spill
WHERE _for_job(job_id, $job_id);
