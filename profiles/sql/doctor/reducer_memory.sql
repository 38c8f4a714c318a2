-- reducer_memory: reducer containers much larger than the memory the reducers used (Dr. Elephant's Reducer Memory).
-- requires: _severity, _doctor_tasks, job_summary, job_conf
--
-- Dr. Elephant (GenericMemoryHeuristic.java, HeuristicConf.xml) grades the mean peak physical
-- memory over the container size (0.6, 0.5, 0.4, 0.3: the less used, the worse), capped by the
-- container size against a default (1, 1.5, 2, 2.5 times 2048 MB: small containers waste little).
-- The container is mapreduce.reduce.memory.mb (mapred.job.reduce.memory.mb), the default where unset or
-- not positive.
--
-- Output columns
--   job_id, level, severity, value (mean PHYSICAL_MEMORY_BYTES / container bytes)
--   threshold, detail, recommendation, skipped
-- Parameters: $job_id, $memory_ratio, $container_memory (multiples of $container_default_mb)

CREATE OR REPLACE TEMP VIEW doctor_reducer_memory AS
WITH _t AS (
    SELECT job_id, count(*) AS tasks, avg(physical_memory_bytes) AS memory_bytes,
        max(physical_memory_bytes) AS max_memory_bytes
    FROM _doctor_tasks
    WHERE task_type = 'REDUCE' AND physical_memory_bytes > 0
    GROUP BY job_id
),
_c AS (
    SELECT job_id, max(TRY_CAST(value AS DOUBLE)) AS container_mb
    FROM job_conf
    WHERE key IN ('mapreduce.reduce.memory.mb', 'mapred.job.reduce.memory.mb')
    GROUP BY job_id
)
SELECT j.job_id, t.tasks, t.memory_bytes, t.max_memory_bytes,
    CASE WHEN c.container_mb > 0 THEN c.container_mb END AS container_mb
FROM job_summary AS j
LEFT JOIN _t AS t ON t.job_id = j.job_id
LEFT JOIN _c AS c ON c.job_id = j.job_id;

SELECT
    job_id,
    coalesce(container_mb, $container_default_mb) AS used_container_mb,
    memory_bytes / (used_container_mb * 1048576) AS value,
    CASE WHEN value IS NOT NULL THEN
        least(_sev_desc(value, $memory_ratio),
              _sev_asc(used_container_mb / $container_default_mb, $container_memory)) END AS level,
    _sev_name(level) AS severity,
    'used / container <= ' || _limits($memory_ratio) AS threshold,
    printf('%d reducers: mean peak %.0f MB (max %.0f MB) of a %.0f MB container%s', tasks, memory_bytes / 1048576,
           max_memory_bytes / 1048576, used_container_mb,
           CASE WHEN container_mb IS NULL THEN ' (the default: the job sets none)' ELSE '' END) AS detail,
    printf('lower mapreduce.reduce.memory.mb towards %.0f MB (the peak plus a quarter) to run more reducers per node',
           1.25 * max_memory_bytes / 1048576) AS recommendation,
    CASE WHEN tasks IS NULL THEN 'no reducer with a PHYSICAL_MEMORY_BYTES counter above 0 (a 0 is not measured)' END AS skipped
FROM doctor_reducer_memory
WHERE job_id = $job_id;
