-- Dataflow execution chart data (HiTune, Dai et al. 2011, Figure 14): one line per
-- task attempt; segments: 'bootstrap' (attempt start -> its first vertex instance),
-- one per vertex (earliest start -> latest end over the vertex's threads), and
-- 'idle' (the attempt's last vertex end -> the end of the job).
-- Attempts come from the attempts table (logs, history, HiTune CSVs); an attempt
-- known only from its vertex instances starts at its first instance.
-- Instances: one source per job, never both added together: the reconstructed ones
--   (source 'reconstruct', `phaseline dataflow`) when the job has them, else HiTune's
--   own (source 'hitune_csv', from its CSV reports).
-- Parameters: $job_id.
-- Output columns: attempt_id, task_type ('MAP'/'REDUCE'), host, segment, start_ms,
--   end_ms, line (0-based row of the chart: maps by start, then reduces)
WITH vi AS (  -- one source of instances per job (dataflow_job_instances.sql)
    SELECT * FROM _job_instances($job_id)
),
v AS (
    SELECT attempt_id, any_value(host) AS host, vertex, min(start_ms) AS start_ms, max(end_ms) AS end_ms
    FROM vi GROUP BY attempt_id, vertex
),
span AS (
    SELECT attempt_id, any_value(host) AS host, min(start_ms) AS first_ms, max(end_ms) AS last_ms
    FROM v GROUP BY attempt_id
),
att AS (
    SELECT s.attempt_id,
           coalesce(a.task_type, CASE WHEN s.attempt_id LIKE '%\_m\_%' ESCAPE '\' THEN 'MAP' ELSE 'REDUCE' END) AS task_type,
           coalesce(s.host, a.host) AS host,
           least(coalesce(a.start_ms, s.first_ms), s.first_ms) AS start_ms,
           s.first_ms, s.last_ms
    FROM span s
    LEFT JOIN (SELECT attempt_id, any_value(task_type) AS task_type, any_value(host) AS host,
                      min(start_ms) AS start_ms
               FROM attempts GROUP BY attempt_id) a ON a.attempt_id = s.attempt_id
),
job_end AS (SELECT max(last_ms) AS end_ms FROM att),
lines AS (
    SELECT *, row_number() OVER (ORDER BY task_type <> 'MAP', start_ms, attempt_id) - 1 AS line FROM att
),
segments AS (
    SELECT attempt_id, task_type, host, 'bootstrap' AS segment, start_ms, first_ms AS end_ms, line FROM lines
    UNION ALL
    SELECT l.attempt_id, l.task_type, l.host, v.vertex, v.start_ms, v.end_ms, l.line
    FROM lines l JOIN v ON v.attempt_id = l.attempt_id
    UNION ALL
    SELECT l.attempt_id, l.task_type, l.host, 'idle', l.last_ms, j.end_ms, l.line FROM lines l CROSS JOIN job_end j
)
SELECT * FROM segments WHERE end_ms > start_ms OR segment NOT IN ('bootstrap', 'idle')
ORDER BY line, start_ms, segment
