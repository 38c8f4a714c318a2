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
-- Helper view _history_segments: the same rows without data_bytes/data_records (no
-- counters needed: what skew and stragglers read).
--
-- Output columns
--   job_id, task_id, attempt_id, task_type, status, host
--   phase          phase name (phaseline.schemas.Phase values, '+'-joined when combined)
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

CREATE OR REPLACE TEMP VIEW _history_segments AS
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
        coalesce(j.total_reduces, r.n, 0) = 0 AS map_only
    FROM attempts AS a
    LEFT JOIN _jobs AS j ON j.job_id = a.job_id
    LEFT JOIN _reduces AS r ON r.job_id = a.job_id
    WHERE a.task_type IN ('MAP', 'REDUCE')
      AND a.start_ms IS NOT NULL AND a.finish_ms IS NOT NULL AND a.finish_ms >= a.start_ms
),
_spans AS (
    -- keep the reduce boundaries in order: sort cannot end before shuffle
    SELECT * REPLACE (CASE WHEN so IS NOT NULL AND sf IS NOT NULL THEN greatest(so, sf) ELSE so END AS so),
        CASE WHEN map_only THEN 'write' ELSE 'spill+merge' END AS tail
    FROM _raw
),
_segments AS (
    -- one list of segments per attempt; a missing boundary merges its neighbours
    SELECT
        job_id, task_id, attempt_id, task_type, status, host,
        CASE
            WHEN task_type = 'MAP' AND mf IS NULL THEN [
                {'seq': 1, 'phase': 'map+' || tail, 's': start_ms, 'e': finish_ms}]
            WHEN task_type = 'MAP' THEN [
                {'seq': 1, 'phase': 'map', 's': start_ms, 'e': mf},
                {'seq': 2, 'phase': tail, 's': mf, 'e': finish_ms}]
            WHEN sf IS NOT NULL AND so IS NOT NULL THEN [
                {'seq': 1, 'phase': 'shuffle', 's': start_ms, 'e': sf},
                {'seq': 2, 'phase': 'sort', 's': sf, 'e': so},
                {'seq': 3, 'phase': 'reduce+write', 's': so, 'e': finish_ms}]
            WHEN sf IS NOT NULL THEN [
                {'seq': 1, 'phase': 'shuffle', 's': start_ms, 'e': sf},
                {'seq': 2, 'phase': 'sort+reduce+write', 's': sf, 'e': finish_ms}]
            WHEN so IS NOT NULL THEN [
                {'seq': 1, 'phase': 'shuffle+sort', 's': start_ms, 'e': so},
                {'seq': 2, 'phase': 'reduce+write', 's': so, 'e': finish_ms}]
            ELSE [{'seq': 1, 'phase': 'shuffle+sort+reduce+write', 's': start_ms, 'e': finish_ms}]
        END AS segs
    FROM _spans
),
_rows AS (
    SELECT job_id, task_id, attempt_id, task_type, status, host, unnest(segs) AS g FROM _segments
)
SELECT
    job_id, task_id, attempt_id, task_type, status, host,
    g.phase AS phase,
    g.seq::BIGINT AS seq,
    g.s AS start_ms,
    g.e AS end_ms,
    g.e - g.s AS dur_ms,
    'history' AS source
FROM _rows;

CREATE OR REPLACE TEMP VIEW phases_history AS
SELECT
    s.job_id, s.task_id, s.attempt_id, s.task_type, s.status, s.host, s.phase, s.seq,
    s.start_ms, s.end_ms, s.dur_ms,
    -- a combined phase carries the data of its first component
    CASE split_part(s.phase, '+', 1)
        WHEN 'map' THEN coalesce(c.file_input_bytes, c.hdfs_bytes_read)
        WHEN 'spill' THEN c.map_output_bytes
        WHEN 'write' THEN coalesce(c.file_output_bytes, c.hdfs_bytes_written)
        WHEN 'shuffle' THEN c.reduce_shuffle_bytes
        WHEN 'sort' THEN c.reduce_shuffle_bytes
        WHEN 'reduce' THEN coalesce(c.file_output_bytes, c.hdfs_bytes_written)
    END AS data_bytes,
    CASE split_part(s.phase, '+', 1)
        WHEN 'map' THEN c.map_input_records
        WHEN 'spill' THEN c.map_output_records
        WHEN 'write' THEN c.map_output_records
        WHEN 'sort' THEN c.reduce_input_records
        WHEN 'reduce' THEN c.reduce_input_records
    END AS data_records,
    s.source
FROM _history_segments AS s
LEFT JOIN _attempt_counters AS c ON c.job_id = s.job_id AND c.attempt_id = s.attempt_id;

SELECT * FROM phases_history WHERE job_id = $job_id ORDER BY start_ms, attempt_id, seq;
