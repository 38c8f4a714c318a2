-- jit_compiles: the JIT's compiles in each local engine run's tasks (JFR's jdk.Compilation, which
-- ingest/jfr.py keeps in system_samples as jit_compile_ms; `phaseline engine run` records every
-- run's in jit.jfr).
--
-- Output columns
--   job_id
--   start_ms   the compile's start (epoch ms)
--   dur_ms     its length (ms)
--
-- A compile belongs to the job whose run directory holds its recording (the JFR source beside the
-- job's run.json) and falls between the job's first task attempt's start and its last attempt's
-- finish (the warm-up job's compiles and the JVM's own start-up fall outside).

CREATE OR REPLACE TEMP VIEW jit_compiles AS
WITH run_dirs AS (
    SELECT j.job_id, regexp_replace(s.path, '[/\\][^/\\]*$', '') AS dir
    FROM sources AS s, unnest(s.job_ids) AS j(job_id)
    WHERE s.format = 'phaseline-engine-run'
),
recordings AS (
    SELECT r.job_id, s.sha256
    FROM sources AS s
    JOIN run_dirs AS r ON regexp_replace(s.path, '[/\\][^/\\]*$', '') = r.dir
    WHERE s.format = 'jfr'
),
task_spans AS (
    SELECT job_id, min(start_ms) AS first_ms, max(finish_ms) AS last_ms
    FROM attempts
    GROUP BY job_id
)
SELECT r.job_id, c.ts_ms AS start_ms, c.value AS dur_ms
FROM system_samples AS c
JOIN recordings AS r ON c.source_sha256 = r.sha256
JOIN task_spans AS t ON t.job_id = r.job_id
WHERE c.metric = 'jit_compile_ms' AND c.ts_ms >= t.first_ms AND c.ts_ms < t.last_ms;

SELECT start_ms, dur_ms FROM jit_compiles WHERE job_id = $job_id ORDER BY start_ms;
