-- overlapping_sources: every (table, job, source) where several sources have rows of one table
-- for one job, ranked: the policy that gives each job one account in the views.
--
-- Sources of a job are ranked once, for all tables: a first-hand format before a derived one
-- ($derived_formats: Rumen's parse of a history), a source whose successful tasks fit its own job
-- totals before one with more (edited by hand, or two runs under one id), the job's own complete
-- history before its task logs ($history_formats: the ApplicationMaster's record of each attempt's
-- launch and end, where a task log starts only once the task's JVM runs; a history cut short
-- competes on its rows like any other source), the source with more
-- rows about the job (a complete copy before a truncated one), a landed source before a partial
-- one, the first path in sort order.  A source that says the job was submitted more than
-- $same_run_slack_ms from the kept one's submit time is another run under the same id.
--
-- Reads _per_job (filled per table before).
-- Parameters: $derived_formats (VARCHAR[]), $history_formats (VARCHAR[]), $same_run_slack_ms
--
-- Output columns
--   table_name, job_id, source_sha256, path, format, rows
--   preference   1 is the source kept
--   stand_in     a derived or overfull source: adds no unit to the others' account
--   other_run    another run under the same job id: adds nothing
--   submit_ms    when this source says the job was submitted
CREATE TEMP TABLE overlapping_sources AS
WITH shared AS (
    SELECT * FROM _per_job QUALIFY count(*) OVER (PARTITION BY table_name, job_id) > 1
),
src AS (
    SELECT * FROM raw.sources WHERE status IN ('landed', 'partial')
    QUALIFY row_number() OVER (PARTITION BY sha256 ORDER BY path) = 1
),
overfull AS (  -- sources with more successful tasks of a type than their own job total
    SELECT DISTINCT t.job_id, t.source_sha256
    FROM (SELECT job_id, source_sha256, task_type, count(DISTINCT task_id) AS n FROM raw.tasks
          WHERE status = 'SUCCEEDED' AND job_id IN (SELECT job_id FROM shared) GROUP BY ALL) AS t
    JOIN raw.jobs AS j USING (job_id, source_sha256)
    WHERE t.n > if(t.task_type = 'MAP', j.total_maps, if(t.task_type = 'REDUCE', j.total_reduces, NULL))
),
submitted AS (  -- when each source says the job was submitted
    SELECT job_id, source_sha256, min(submit_ms) AS submit_ms FROM raw.jobs
    WHERE job_id IN (SELECT job_id FROM shared) GROUP BY ALL
),
sources_of_job AS (  -- one row per (job, source): its rows, and what ranks it
    SELECT p.job_id, p.source_sha256, src.path, src.format, src.status, sum(p.rows) AS rows,
           coalesce(list_contains($derived_formats, src.format), false) AS derived,
           coalesce(list_contains($history_formats, src.format), false) AS history,
           (p.job_id, p.source_sha256) IN (SELECT (job_id, source_sha256) FROM overfull) AS overfull,
           any_value(t.submit_ms) AS submit_ms
    FROM _per_job AS p LEFT JOIN src ON src.sha256 = p.source_sha256
    LEFT JOIN submitted AS t ON t.job_id = p.job_id AND t.source_sha256 = p.source_sha256
    WHERE p.job_id IN (SELECT job_id FROM shared)
    GROUP BY p.job_id, p.source_sha256, src.path, src.format, src.status
),
ranked AS (
    SELECT *, row_number() OVER (
               PARTITION BY job_id
               ORDER BY derived, overfull, history AND status = 'landed' DESC, rows DESC, status = 'landed' DESC, path, source_sha256
           ) AS preference
    FROM sources_of_job
),
judged AS (  -- the submit time of the kept run: the first one given, in order of preference
    SELECT *, first_value(submit_ms IGNORE NULLS) OVER (
               PARTITION BY job_id ORDER BY preference ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
           ) AS kept_submit_ms
    FROM ranked
)
SELECT s.table_name, s.job_id, s.source_sha256, r.path, r.format, s.rows, r.preference,
       r.derived OR r.overfull AS stand_in,
       coalesce(abs(r.submit_ms - r.kept_submit_ms) > $same_run_slack_ms, false) AS other_run,
       r.submit_ms
FROM shared AS s JOIN judged AS r USING (job_id, source_sha256)
