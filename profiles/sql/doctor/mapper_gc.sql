-- mapper_gc: mappers spending much of their CPU time in garbage collection (Dr. Elephant's Mapper GC).
-- requires: _severity, _doctor_tasks, job_summary
--
-- Dr. Elephant (GenericGCHeuristic.java, HeuristicConf.xml) grades the mean GC time over the mean
-- CPU time (0.01, 0.02, 0.03, 0.04), capped by the mean task runtime (5, 10, 12, 15 minutes: GC in
-- short tasks costs little).
--
-- Output columns
--   job_id, level, severity, value (GC_TIME_MILLIS / CPU_MILLISECONDS, means over the mappers),
--   threshold, detail, recommendation, skipped
-- Parameters: $job_id, $gc_ratio, $runtime_min

CREATE OR REPLACE TEMP VIEW doctor_mapper_gc AS
WITH _t AS (
    SELECT job_id, count(*) AS tasks, avg(gc_ms) AS gc_ms, avg(cpu_ms) AS cpu_ms, avg(dur_ms) AS dur_ms
    FROM _doctor_tasks
    WHERE task_type = 'MAP' AND gc_ms IS NOT NULL AND cpu_ms IS NOT NULL
    GROUP BY job_id
)
SELECT j.job_id, t.tasks, t.gc_ms, t.cpu_ms, t.dur_ms, t.gc_ms / nullif(t.cpu_ms, 0) AS gc_ratio
FROM job_summary AS j
LEFT JOIN _t AS t ON t.job_id = j.job_id;

SELECT
    job_id,
    CASE WHEN gc_ratio IS NOT NULL THEN
        least(_sev_asc(gc_ratio, $gc_ratio), _sev_asc(dur_ms / 60000, $runtime_min)) END AS level,
    _sev_name(level) AS severity,
    gc_ratio AS value,
    'GC / CPU >= ' || _limits($gc_ratio) || ' (tasks of ' || _limits($runtime_min) || ' min)' AS threshold,
    printf('%d mappers: mean GC %.0f ms of %.0f ms CPU (%.1f %%), mean runtime %.1f s', tasks, gc_ms, cpu_ms,
           100 * gc_ratio, dur_ms / 1000) AS detail,
    'give the mapper JVM more heap (mapreduce.map.java.opts -Xmx, mapreduce.map.memory.mb), or make fewer objects per record' AS recommendation,
    CASE WHEN tasks IS NULL THEN 'no mapper with GC_TIME_MILLIS and CPU_MILLISECONDS counters'
         WHEN gc_ratio IS NULL THEN 'the mappers used no CPU time (CPU_MILLISECONDS 0)' END AS skipped
FROM doctor_mapper_gc
WHERE job_id = $job_id;
