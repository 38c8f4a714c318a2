-- shuffle_sort: reduces spending long in shuffle and sort against their own reduce work (Dr. Elephant's Shuffle & Sort).
-- requires: _severity, _job_filter, _phase_durations, job_summary
--
-- Dr. Elephant (ShuffleSortHeuristic.java, HeuristicConf.xml) grades the mean shuffle time and the
-- mean sort time each against the mean reduce time (after the sort) (1, 2, 4, 8 times), capped by
-- the time itself (1, 5, 10, 30 minutes); the worse of shuffle and sort is the finding.  Phases are
-- those of phases.sql for successful reduces; a reduce whose source does not separate them (a
-- combined 'shuffle+sort' phase) is left out.
--
-- Output columns
--   job_id, level, severity, value ((shuffle + sort) / reduce, the means'), threshold, detail,
--   recommendation, skipped
-- Parameters: $job_id, $runtime_ratio, $runtime_min

CREATE OR REPLACE TEMP VIEW doctor_shuffle_sort AS
WITH _per AS (
    SELECT job_id, attempt_id,
        sum(dur_ms) FILTER (WHERE phase = 'shuffle') AS shuffle_ms,
        sum(dur_ms) FILTER (WHERE phase = 'sort') AS sort_ms,
        sum(dur_ms) FILTER (WHERE phase IN ('reduce', 'write', 'reduce+write')) AS reduce_ms
    FROM _phase_durations
    WHERE task_type = 'REDUCE' AND status = 'SUCCEEDED' AND phase <> 'attempt'
    GROUP BY job_id, attempt_id
),
_t AS (
    SELECT job_id, count(*) AS tasks, avg(shuffle_ms) AS shuffle_ms, avg(sort_ms) AS sort_ms,
        avg(reduce_ms) AS reduce_ms
    FROM _per
    WHERE shuffle_ms IS NOT NULL AND sort_ms IS NOT NULL AND reduce_ms IS NOT NULL
    GROUP BY job_id
)
SELECT j.job_id, t.tasks, t.shuffle_ms, t.sort_ms, t.reduce_ms
FROM job_summary AS j
LEFT JOIN _t AS t ON t.job_id = j.job_id;

SELECT
    job_id,
    (shuffle_ms + sort_ms) / nullif(reduce_ms, 0) AS value,
    CASE WHEN tasks IS NOT NULL THEN greatest(
        least(_sev_asc(shuffle_ms / greatest(reduce_ms, 1), $runtime_ratio), _sev_asc(shuffle_ms / 60000, $runtime_min)),
        least(_sev_asc(sort_ms / greatest(reduce_ms, 1), $runtime_ratio), _sev_asc(sort_ms / 60000, $runtime_min))
    ) END AS level,
    _sev_name(level) AS severity,
    'shuffle or sort / reduce >= ' || _limits($runtime_ratio) || ' (and >= ' || _limits($runtime_min) || ' min)' AS threshold,
    printf('%d reduces: mean shuffle %.1f s, sort %.1f s, reduce %.1f s', tasks, shuffle_ms / 1000, sort_ms / 1000,
           reduce_ms / 1000) AS detail,
    'start the reduces later (mapreduce.job.reduce.slowstart.completedmaps), compress the map output, or give the shuffle more memory' AS recommendation,
    CASE WHEN tasks IS NULL THEN 'no successful reduce with separate shuffle, sort and reduce phases (a map-only job, or a source that joins them)' END AS skipped
FROM doctor_shuffle_sort
WHERE _for_job(job_id, $job_id);
