-- _task_memory: Dr. Elephant's Mapper and Reducer Memory for one task type, as a table macro
-- (mapper_memory and reducer_memory select from it).
-- requires: _severity, _job_filter, _doctor_tasks, job_summary, job_conf
--
-- _task_memory(kind, job, memory_limits, container_limits, default_mb): kind is 'MAP' or 'REDUCE';
-- the container is mapreduce.<map|reduce>.memory.mb (mapred.job.<map|reduce>.memory.mb), default_mb
-- where unset or not positive.  Output columns: those of mapper_memory.

CREATE OR REPLACE TEMP MACRO _task_memory(kind, job, memory_limits, container_limits, default_mb) AS TABLE
WITH _t AS (
    SELECT job_id, count(*) AS tasks, avg(physical_memory_bytes) AS memory_bytes,
        max(physical_memory_bytes) AS max_memory_bytes
    FROM _doctor_tasks
    WHERE task_type = kind AND physical_memory_bytes > 0
    GROUP BY job_id
),
_c AS (
    SELECT job_id, max(TRY_CAST(value AS DOUBLE)) AS container_mb
    FROM job_conf
    WHERE key IN ('mapreduce.' || lower(kind) || '.memory.mb', 'mapred.job.' || lower(kind) || '.memory.mb')
    GROUP BY job_id
),
_m AS (
    SELECT j.job_id, t.tasks, t.memory_bytes, t.max_memory_bytes,
        CASE WHEN c.container_mb > 0 THEN c.container_mb END AS container_mb
    FROM job_summary AS j
    LEFT JOIN _t AS t ON t.job_id = j.job_id
    LEFT JOIN _c AS c ON c.job_id = j.job_id
)
SELECT
    job_id,
    coalesce(container_mb, default_mb) AS used_container_mb,
    memory_bytes / (used_container_mb * 1048576) AS value,
    CASE WHEN value IS NOT NULL THEN
        least(_sev_desc(value, memory_limits),
              _sev_asc(used_container_mb / default_mb, container_limits)) END AS level,
    _sev_name(level) AS severity,
    'used / container <= ' || _limits(memory_limits) AS threshold,
    printf('%d %ss: mean peak %.0f MB (max %.0f MB) of a %.0f MB container%s', tasks, _role(kind),
           memory_bytes / 1048576, max_memory_bytes / 1048576, used_container_mb,
           CASE WHEN container_mb IS NULL THEN ' (the default: the job sets none)' ELSE '' END) AS detail,
    printf('lower mapreduce.%s.memory.mb towards %.0f MB (the peak plus a quarter) to run more %ss per node',
           lower(kind), 1.25 * max_memory_bytes / 1048576, _role(kind)) AS recommendation,
    CASE WHEN tasks IS NULL THEN 'no ' || _role(kind) || ' with a PHYSICAL_MEMORY_BYTES counter above 0 (a 0 is not measured)' END AS skipped
FROM _m
WHERE _for_job(job_id, job);
