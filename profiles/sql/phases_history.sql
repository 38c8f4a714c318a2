-- phases_history: phases of each map and reduce attempt from the history times (.jhist, 0.20 history, Rumen).
-- requires: _attempt_counters
--
-- The boundaries are the times Hadoop's own history parser reports:
--   MAP      start ........ map_finish ............ finish
--            |--- map ----|------ spill+merge ------|
--            map         = start..map_finish (read + map function + collect, with the
--                          spills that ran alongside)
--            spill+merge = map_finish..finish (the final spill and the merge of the spill
--                          files, Hadoop's SORT phase of a map task, plus the commit)
--            write       = map_finish..finish instead of spill+merge in map-only jobs
--                          (closing the direct HDFS output and committing it)
--   REDUCE   start ... shuffle_finish ... sort_finish ......... finish
--            |-- shuffle --|---- sort ----|--- reduce+write ---|
-- A boundary the source lacks (NULL, or <= 0) merges its two neighbours into one
-- row named by both ("map+spill+merge", "sort+reduce+write"); boundaries outside
-- [start, finish] are clamped into it.  So the phases of an attempt never overlap
-- and their durations sum to finish - start.  Attempts without start or finish
-- times (never launched, or cut off) have no phases; SETUP/CLEANUP attempts none.
--
-- Output columns
--   job_id, task_id, attempt_id, task_type, status, host
--   phase          phase name (profiles.schemas.Phase values, '+'-joined when combined)
--   seq            1-based order of the phase within its attempt
--   start_ms, end_ms, dur_ms
--   data_bytes     data the phase processed, from the attempt's counters:
--                  map: input bytes (FileInputFormat BYTES_READ / MAP_INPUT_BYTES, else
--                  HDFS_BYTES_READ); spill+merge: MAP_OUTPUT_BYTES; write: bytes written;
--                  shuffle, sort: REDUCE_SHUFFLE_BYTES; reduce+write: bytes written
--                  (a combined phase takes the data of its first component)
--   data_records   map: MAP_INPUT_RECORDS; spill+merge, write: MAP_OUTPUT_RECORDS;
--                  shuffle: NULL; sort, reduce+write: REDUCE_INPUT_RECORDS
--   source         'history'

CREATE OR REPLACE TEMP VIEW phases_history AS
WITH _reduces AS (
    SELECT job_id, count(*) AS n FROM attempts WHERE task_type = 'REDUCE' GROUP BY job_id
),
_jobs AS (
    SELECT job_id, max(total_reduces) AS total_reduces FROM jobs GROUP BY job_id
),
_raw AS (
    SELECT
        a.job_id, a.task_id, a.attempt_id, a.task_type, a.status, a.host, a.start_ms, a.finish_ms,
        CASE WHEN a.map_finish_ms > 0 THEN least(greatest(a.map_finish_ms, a.start_ms), a.finish_ms) END AS mf,
        CASE WHEN a.shuffle_finish_ms > 0
            THEN least(greatest(a.shuffle_finish_ms, a.start_ms), a.finish_ms) END AS sf,
        CASE WHEN a.sort_finish_ms > 0 THEN least(greatest(a.sort_finish_ms, a.start_ms), a.finish_ms) END AS so,
        coalesce(j.total_reduces, r.n, 0) = 0 AS map_only,
        coalesce(c.file_input_bytes, c.hdfs_bytes_read) AS in_bytes,
        c.map_input_records AS in_recs,
        c.map_output_bytes AS mo_bytes,
        c.map_output_records AS mo_recs,
        coalesce(c.file_output_bytes, c.hdfs_bytes_written) AS out_bytes,
        c.reduce_shuffle_bytes AS sh_bytes,
        c.reduce_input_records AS ri_recs
    FROM attempts AS a
    LEFT JOIN _jobs AS j ON j.job_id = a.job_id
    LEFT JOIN _reduces AS r ON r.job_id = a.job_id
    LEFT JOIN _attempt_counters AS c ON c.job_id = a.job_id AND c.attempt_id = a.attempt_id
    WHERE a.task_type IN ('MAP', 'REDUCE')
      AND a.start_ms IS NOT NULL AND a.finish_ms IS NOT NULL AND a.finish_ms >= a.start_ms
),
_spans AS (
    -- keep the reduce boundaries in order: sort cannot end before shuffle
    SELECT * REPLACE (CASE WHEN so IS NOT NULL AND sf IS NOT NULL THEN greatest(so, sf) ELSE so END AS so)
    FROM _raw
),
_points AS (
    SELECT job_id, attempt_id, 1 AS ord,
        CASE task_type WHEN 'MAP' THEN 'map' ELSE 'shuffle' END AS name,
        CASE task_type WHEN 'MAP' THEN mf ELSE sf END AS ts,
        CASE task_type WHEN 'MAP' THEN in_bytes ELSE sh_bytes END AS data_bytes,
        CASE task_type WHEN 'MAP' THEN in_recs END AS data_records
    FROM _spans
    UNION ALL
    SELECT job_id, attempt_id, 2 AS ord,
        CASE WHEN task_type = 'REDUCE' THEN 'sort' WHEN map_only THEN 'write' ELSE 'spill+merge' END,
        CASE task_type WHEN 'MAP' THEN finish_ms ELSE so END,
        CASE WHEN task_type = 'REDUCE' THEN sh_bytes WHEN map_only THEN out_bytes ELSE mo_bytes END,
        CASE task_type WHEN 'MAP' THEN mo_recs ELSE ri_recs END
    FROM _spans
    UNION ALL
    SELECT job_id, attempt_id, 3 AS ord, 'reduce+write', finish_ms, out_bytes, ri_recs
    FROM _spans WHERE task_type = 'REDUCE'
),
_segmented AS (
    -- a point joins the segment of the next point that has a time
    SELECT *,
        coalesce(count(ts) OVER (
            PARTITION BY job_id, attempt_id ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ), 0) AS seg
    FROM _points
),
_segments AS (
    SELECT
        job_id, attempt_id, seg,
        string_agg(name, '+' ORDER BY ord) AS phase,
        max(ts) AS end_ms,
        arg_min(data_bytes, ord) AS data_bytes,
        arg_min(data_records, ord) AS data_records
    FROM _segmented
    GROUP BY job_id, attempt_id, seg
)
SELECT
    s.job_id, s.task_id, s.attempt_id, s.task_type, s.status, s.host,
    g.phase,
    row_number() OVER (PARTITION BY g.job_id, g.attempt_id ORDER BY g.seg) AS seq,
    coalesce(lag(g.end_ms) OVER (PARTITION BY g.job_id, g.attempt_id ORDER BY g.seg), s.start_ms) AS start_ms,
    g.end_ms,
    g.end_ms - coalesce(lag(g.end_ms) OVER (PARTITION BY g.job_id, g.attempt_id ORDER BY g.seg), s.start_ms)
        AS dur_ms,
    g.data_bytes,
    g.data_records,
    'history' AS source
FROM _segments AS g
JOIN _spans AS s ON s.job_id = g.job_id AND s.attempt_id = g.attempt_id;

SELECT * FROM phases_history WHERE job_id = $job_id ORDER BY start_ms, attempt_id, seq;
