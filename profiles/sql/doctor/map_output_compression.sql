-- map_output_compression: uncompressed map output where moving it is much of the job (phaseline).
-- requires: _severity, _job_filter, _phase_durations, _doctor_tasks, job_summary, job_conf
--
-- Map output is written in spills, merged, shuffled and merged again; compressing it
-- (mapreduce.map.output.compress) shrinks each of those at some CPU cost.  Where it is off, the
-- share of the task time spent in those phases (maps' spill and merge, reduces' shuffle and sort)
-- is graded (0.1, 0.2, 0.3, 0.5 by default), capped by the map output's size (0.1, 1, 10, 100 GB
-- by default: small outputs gain little).  With compression on the finding is None.
--
-- Output columns
--   job_id, level, severity, value (the share of task time moving map output), threshold, detail,
--   recommendation, skipped
-- Parameters: $job_id, $io_share, $output_gb

CREATE OR REPLACE TEMP VIEW doctor_map_output_compression AS
WITH _p AS (
    SELECT job_id,
        sum(dur_ms) FILTER (WHERE phase = 'attempt') AS task_ms,
        sum(dur_ms) FILTER (WHERE (task_type = 'MAP' AND phase IN ('spill', 'merge'))
                              OR (task_type = 'REDUCE' AND phase IN ('shuffle', 'sort'))) AS io_ms
    FROM _phase_durations
    WHERE status = 'SUCCEEDED'
    GROUP BY job_id
),
_bytes AS (
    SELECT job_id, sum(map_output_bytes) AS map_output_bytes
    FROM _doctor_tasks
    WHERE task_type = 'MAP'
    GROUP BY job_id
),
_c AS (
    SELECT job_id, bool_or(lower(trim(value)) = 'true') AS compressed
    FROM job_conf WHERE key IN ('mapreduce.map.output.compress', 'mapred.compress.map.output')
    GROUP BY job_id
)
SELECT j.job_id, p.task_ms, p.io_ms, b.map_output_bytes, coalesce(c.compressed, false) AS compressed
FROM job_summary AS j
LEFT JOIN _p AS p ON p.job_id = j.job_id
LEFT JOIN _bytes AS b ON b.job_id = j.job_id
LEFT JOIN _c AS c ON c.job_id = j.job_id;

SELECT
    job_id,
    io_ms / nullif(task_ms, 0) AS value,
    CASE WHEN compressed THEN 0
         ELSE least(_sev_asc(value, $io_share), _sev_asc(map_output_bytes / 1e9, $output_gb)) END AS level,
    _sev_name(level) AS severity,
    'moving share >= ' || _limits($io_share) || ' (and output >= ' || _limits($output_gb) || ' GB)' AS threshold,
    printf('map output %s: %.1f MB; %.0f %% of the task time spills, merges and shuffles it',
           CASE WHEN compressed THEN 'compressed' ELSE 'uncompressed' END, map_output_bytes / 1e6, 100 * value) AS detail,
    CASE WHEN compressed THEN 'none needed'
         ELSE 'compress the map output: mapreduce.map.output.compress=true with a fast codec (Snappy or LZ4)' END AS recommendation,
    CASE WHEN map_output_bytes IS NULL THEN 'no map with a MAP_OUTPUT_BYTES counter'
         WHEN task_ms IS NULL OR io_ms IS NULL THEN 'no phases of successful attempts' END AS skipped
FROM doctor_map_output_compression
WHERE _for_job(job_id, $job_id);
