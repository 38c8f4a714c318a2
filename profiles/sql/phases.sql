-- phases: the phases of every map and reduce attempt, from the best source available.
-- requires: phases_history
--
-- Sources, best first (the source column says which one an attempt's rows came from):
--   'tasklog'  attempt_phases, parsed from the attempt's MapTask/ReduceTask log: the six
--              generic phases of Zhang et al. 2013 (read, collect, spill, merge; shuffle,
--              write) and the custom map/reduce phases, with the data each processed.
--              Log phases may overlap (the SpillThread runs beside the map function).
--   'history'  phases_history: history-file boundaries, coarser and never overlapping.
-- An attempt takes all its rows from one source.  (Stack-sample splits of interleaved
-- phases would rank above 'history' when a sampler source lands in the store.)
--
-- Helper view _phase_times: the same rows without the data columns, which it never
-- computes for history rows (no counter pivot): what skew and stragglers read.
--
-- Output columns
--   job_id, task_id, attempt_id, task_type, status, host (task_id/status/host from
--   attempts; NULL for log-only attempts the history does not know)
--   phase, seq (1-based order by start within the attempt)
--   start_ms, end_ms, dur_ms, data_bytes, data_records
--   source     'tasklog' or 'history'
--   lane       'main' (the task thread: its phases never overlap and cover the attempt) or
--              'background' (helper threads beside it, e.g. the SpillThread: dur_ms is their
--              summed work, which may be less than end_ms - start_ms); history rows are 'main'

CREATE OR REPLACE TEMP VIEW phases AS
WITH _tasklog AS (
    SELECT
        coalesce(p.job_id, a.job_id) AS job_id,
        a.task_id,
        p.attempt_id,
        coalesce(p.task_type, a.task_type) AS task_type,
        a.status,
        a.host,
        p.phase,
        row_number() OVER (PARTITION BY p.attempt_id ORDER BY p.start_ms, p.end_ms, p.phase) AS seq,
        p.start_ms,
        p.end_ms,
        coalesce(p.dur_ms, p.end_ms - p.start_ms) AS dur_ms,
        p.data_bytes,
        p.data_records,
        'tasklog' AS source,
        p.lane
    FROM attempt_phases AS p
    LEFT JOIN (
        -- one row per attempt, should the history have been stored from several files; only the
        -- attempts that have log phases (a store of history files alone has none: nothing to group)
        SELECT job_id, attempt_id, min(task_id) AS task_id, min(task_type) AS task_type,
            min(status) AS status, min(host) AS host
        FROM attempts
        WHERE attempt_id IN (SELECT attempt_id FROM attempt_phases)
        GROUP BY job_id, attempt_id
    ) AS a ON a.attempt_id = p.attempt_id AND (p.job_id IS NULL OR a.job_id = p.job_id)
)
SELECT * FROM _tasklog
UNION ALL BY NAME
SELECT h.*, 'main' AS lane FROM phases_history AS h
ANTI JOIN attempt_phases AS p ON p.attempt_id = h.attempt_id;

CREATE OR REPLACE TEMP VIEW _phase_times AS
SELECT * EXCLUDE (data_bytes, data_records) FROM phases WHERE source = 'tasklog'
UNION ALL BY NAME
SELECT h.* FROM _history_segments AS h
ANTI JOIN attempt_phases AS p ON p.attempt_id = h.attempt_id;

SELECT * FROM phases WHERE job_id = $job_id ORDER BY start_ms, attempt_id, seq;
