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
-- finish (the JVM's own start-up falls outside).  A run after a warm-up (run.json's
-- params.warmup_mb > 0) has none: its job's code was compiled before it, and the few long compiles
-- left in its tasks' time did not all stall them (maponly after a 2 MiB warm-up of the application:
-- 50 compiles, 2.2 s, inside a 2.3 s run of four 2 MiB maps; 2026-12-02, benchmarks/BACKTEST.md).

CREATE OR REPLACE TEMP VIEW jit_compiles AS
WITH cold_runs AS (
    SELECT DISTINCT job_id FROM events
    WHERE event_type = 'engine_run'
        AND coalesce(TRY_CAST(json_extract_string(payload_json, '$.params.warmup_mb') AS DOUBLE), 0) = 0
),
run_dirs AS (
    SELECT j.job_id, regexp_replace(s.path, '[/\\][^/\\]*$', '') AS dir
    FROM sources AS s, unnest(s.job_ids) AS j(job_id)
    WHERE s.format = 'phaseline-engine-run' AND j.job_id IN (SELECT job_id FROM cold_runs)
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
