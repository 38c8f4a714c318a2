-- mapper_speed: maps reading their input far slower than a disk can (CPU-bound maps; Dr. Elephant's Mapper Speed).
-- requires: _severity, _job_filter, _doctor_tasks, job_summary
--
-- Dr. Elephant (MapperSpeedHeuristic.java, HeuristicConf.xml) grades the maps' mean speed
-- (input bytes / runtime) against the disk's read speed (1/2, 1/4, 1/8, 1/32 of it: the slower,
-- the worse), capped by the mean runtime (5, 10, 15, 30 minutes).
--
-- Output columns
--   job_id, level, severity, value (mean input MB/s), threshold, detail, recommendation, skipped
-- Parameters: $job_id, $disk_speed (fractions of $disk_mb_per_s), $runtime_min

CREATE OR REPLACE TEMP VIEW doctor_mapper_speed AS
WITH _t AS (
    SELECT job_id, count(*) AS tasks, avg(input_bytes / (dur_ms / 1000)) AS bytes_per_s, avg(dur_ms) AS mean_ms,
        sum(input_bytes) AS input_bytes
    FROM _doctor_tasks
    WHERE task_type = 'MAP' AND input_bytes > 0 AND dur_ms > 0
    GROUP BY job_id
)
SELECT j.job_id, t.tasks, t.bytes_per_s, t.mean_ms, t.input_bytes
FROM job_summary AS j
LEFT JOIN _t AS t ON t.job_id = j.job_id;

SELECT
    job_id,
    bytes_per_s / 1e6 AS value,
    least(_sev_desc(value / $disk_mb_per_s, $disk_speed), _sev_asc(mean_ms / 60000, $runtime_min)) AS level,
    _sev_name(level) AS severity,
    'MB/s <= ' || _limits(list_transform($disk_speed, lambda x: x * $disk_mb_per_s)) AS threshold,
    printf('%d maps: mean %.1f MB/s over %.1f MB of input, mean runtime %.1f s', tasks, value, input_bytes / 1e6,
           mean_ms / 1000) AS detail,
    'the map function is CPU-bound: profile it (phaseline hotspots), or split the input finer so more maps share the work' AS recommendation,
    CASE WHEN tasks IS NULL THEN 'no map read input (no input byte counters, or a job without input such as Sleep)' END AS skipped
FROM doctor_mapper_speed
WHERE _for_job(job_id, $job_id);
