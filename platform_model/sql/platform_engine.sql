-- The engine and cluster shape each profiled job ran on, as its configuration and attempts tell.
--
-- A LocalJobRunner job has a job id `job_local...` and mapreduce.framework.name=local; a YARN
-- job has mapreduce.framework.name=yarn (or, where its configuration does not say, a .jhist or
-- aggregated logs, which only YARN writes), its NodeManagers' memory (yarn.nodemanager.resource.memory-mb)
-- and its task containers' (mapreduce.map.memory.mb) in its configuration, and its attempts name
-- the NodeManager they ran on (host and HTTP port: a mini cluster's NodeManagers share one host).
--
-- Parameters: $job_name  only the jobs of this name (NULL: every job).
--
-- Output columns (one row per distinct engine and shape)
--   framework          local, yarn, classic (a JobTracker's), or NULL where the store does not say
--   nodes              NodeManagers (host, HTTP port) that ran the job's attempts; the most of any job
--   nm_memory_mb       yarn.nodemanager.resource.memory-mb
--   map_memory_mb      mapreduce.map.memory.mb (a task container's memory)
--   jobs               profiled jobs with this engine and shape
WITH profiled AS (
    SELECT DISTINCT job_id FROM attempts WHERE status = 'SUCCEEDED'
        AND (CAST($job_name AS VARCHAR) IS NULL OR job_id IN (SELECT job_id FROM jobs WHERE name = $job_name))
),
_conf AS (
    SELECT
        job_id,
        max(value) FILTER (WHERE key = 'mapreduce.framework.name') AS framework,
        max(TRY_CAST(value AS BIGINT)) FILTER (WHERE key = 'yarn.nodemanager.resource.memory-mb') AS nm_memory_mb,
        max(TRY_CAST(value AS BIGINT)) FILTER (WHERE key = 'mapreduce.map.memory.mb') AS map_memory_mb
    FROM conf JOIN profiled USING (job_id)
    WHERE key IN ('mapreduce.framework.name', 'yarn.nodemanager.resource.memory-mb', 'mapreduce.map.memory.mb')
    GROUP BY job_id
),
_nodes AS (
    SELECT job_id, count(DISTINCT (host, http_port)) AS nodes
    FROM attempts JOIN profiled USING (job_id)
    WHERE status = 'SUCCEEDED' AND host IS NOT NULL
    GROUP BY job_id
),
_jobs AS (
    SELECT
        p.job_id,
        CASE
            WHEN p.job_id LIKE 'job\_local%' ESCAPE '\' THEN 'local'
            WHEN c.framework IS NOT NULL THEN lower(c.framework)
            -- only an MRAppMaster writes a .jhist, and only NodeManagers aggregate logs: YARN
            WHEN j.source_format IN ('jhist', 'yarn-aggregated-logs') THEN 'yarn'
        END AS framework,
        n.nodes,
        c.nm_memory_mb,
        c.map_memory_mb
    FROM profiled p
    LEFT JOIN _conf c USING (job_id)
    LEFT JOIN _nodes n USING (job_id)
    LEFT JOIN (SELECT job_id, any_value(source_format) AS source_format FROM jobs GROUP BY job_id) j USING (job_id)
)
SELECT
    framework,
    CASE WHEN framework = 'yarn' THEN max(nodes) END AS nodes,
    CASE WHEN framework = 'yarn' THEN nm_memory_mb END AS nm_memory_mb,
    CASE WHEN framework = 'yarn' THEN map_memory_mb END AS map_memory_mb,
    count(*) AS jobs
FROM _jobs
GROUP BY framework, CASE WHEN framework = 'yarn' THEN nm_memory_mb END,
    CASE WHEN framework = 'yarn' THEN map_memory_mb END
ORDER BY jobs DESC, framework
