-- distributed_cache: distributed-cache files or archives over the size limit (Dr. Elephant's Distributed Cache Limit).
-- requires: _severity, _job_filter, job_summary, job_conf
--
-- Dr. Elephant (DistributedCacheLimitHeuristic.java, HeuristicConf.xml: 500,000,000 bytes) reads the
-- sizes the job configuration lists (mapreduce.job.cache.files.filesizes,
-- mapreduce.job.cache.archives.filesizes: comma-separated bytes) and flags a job where one is over
-- the limit as Critical.
--
-- Output columns
--   job_id, level, severity, value (the largest cached file's bytes), threshold, detail, recommendation, skipped
-- Parameters: $job_id, $limit_bytes

CREATE OR REPLACE TEMP VIEW doctor_distributed_cache AS
WITH _sizes AS (
    SELECT job_id, TRY_CAST(trim(unnest(string_split(value, ','))) AS BIGINT) AS bytes
    FROM job_conf
    WHERE key IN ('mapreduce.job.cache.files.filesizes', 'mapreduce.job.cache.archives.filesizes',
                  'mapred.cache.files.filesizes', 'mapred.cache.archives.filesizes')
      AND value IS NOT NULL AND trim(value) <> ''
),
_t AS (
    SELECT job_id, count(bytes) AS files, max(bytes) AS max_bytes, sum(bytes) AS total_bytes
    FROM _sizes GROUP BY job_id
)
SELECT j.job_id, t.files, t.max_bytes, t.total_bytes
FROM job_summary AS j
LEFT JOIN _t AS t ON t.job_id = j.job_id;

SELECT
    job_id,
    max_bytes AS value,
    CASE WHEN max_bytes IS NULL THEN NULL WHEN max_bytes > $limit_bytes THEN 4 ELSE 0 END AS level,
    _sev_name(level) AS severity,
    printf('a file > %d bytes', CAST($limit_bytes AS BIGINT)) AS threshold,
    printf('%d cached file(s), largest %.1f MB, %.1f MB in all', files, max_bytes / 1e6, total_bytes / 1e6) AS detail,
    'ship large side data through HDFS reads or a join instead of the distributed cache' AS recommendation,
    CASE WHEN max_bytes IS NULL THEN 'the job''s configuration lists no distributed-cache file sizes' END AS skipped
FROM doctor_distributed_cache
WHERE _for_job(job_id, $job_id);
