-- _task_gc: Dr. Elephant's Mapper and Reducer GC for one task type, as a table macro
-- (mapper_gc and reducer_gc select from it).
-- requires: _severity, _job_filter, _doctor_tasks, job_summary
--
-- _task_gc(kind, job, gc_limits, runtime_limits): kind is 'MAP' or 'REDUCE'.
-- Output columns: those of mapper_gc.

CREATE OR REPLACE TEMP MACRO _task_gc(kind, job, gc_limits, runtime_limits) AS TABLE
WITH _t AS (
    SELECT job_id, count(*) AS tasks, avg(gc_ms) AS gc_ms, avg(cpu_ms) AS cpu_ms, avg(dur_ms) AS dur_ms
    FROM _doctor_tasks
    WHERE task_type = kind AND gc_ms IS NOT NULL AND cpu_ms IS NOT NULL
    GROUP BY job_id
),
_m AS (
    SELECT j.job_id, t.tasks, t.gc_ms, t.cpu_ms, t.dur_ms, t.gc_ms / nullif(t.cpu_ms, 0) AS gc_ratio
    FROM job_summary AS j
    LEFT JOIN _t AS t ON t.job_id = j.job_id
)
SELECT
    job_id,
    CASE WHEN gc_ratio IS NOT NULL THEN
        least(_sev_asc(gc_ratio, gc_limits), _sev_asc(dur_ms / 60000, runtime_limits)) END AS level,
    _sev_name(level) AS severity,
    gc_ratio AS value,
    'GC / CPU >= ' || _limits(gc_limits) || ' (tasks of ' || _limits(runtime_limits) || ' min)' AS threshold,
    printf('%d %ss: mean GC %.0f ms of %.0f ms CPU (%.1f %%), mean runtime %.1f s', tasks, _role(kind), gc_ms,
           cpu_ms, 100 * gc_ratio, dur_ms / 1000) AS detail,
    printf('give the %s JVM more heap (mapreduce.%s.java.opts -Xmx, mapreduce.%s.memory.mb), or make fewer objects per record',
           _role(kind), lower(kind), lower(kind)) AS recommendation,
    CASE WHEN tasks IS NULL THEN 'no ' || _role(kind) || ' with GC_TIME_MILLIS and CPU_MILLISECONDS counters'
         WHEN gc_ratio IS NULL THEN 'the ' || _role(kind) || 's used no CPU time (CPU_MILLISECONDS 0)' END AS skipped
FROM _m
WHERE _for_job(job_id, job);
