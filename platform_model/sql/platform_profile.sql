-- The platform profile (Zhang et al. 2013, section 3, Figure 2): for every
-- successful map/reduce attempt and every generic phase it should have, the
-- phase's duration and the data it processed.
--
-- Parameters: $job_name  only the jobs of this name (NULL: every job).
--
-- Output columns
--   job_id, attempt_id   the attempt (one benchmark run = one job)
--   task_type            MAP or REDUCE
--   phase                read, collect, spill, merge (MAP); shuffle, write (REDUCE)
--   dur_ms               duration: the sum of the attempt's rows of the phase over both
--                        lanes (a map's spills run partly on the SpillThread); shuffle is
--                        shuffle + sort, which the paper measures together (section 2,
--                        "we combine the shuffle and sort phases"); NULL: no row.  To the
--                        microsecond where the job's own timers measured the phase
--                        (attempt_phases.dur_us: the microbenchmark job's read, collect, write)
--   data_bytes           data processed: the phase rows' bytes (spill: summed over the
--                        spills; shuffle: the shuffle row's), else the attempt's counter
--                        (read: BYTES_READ; collect/spill/merge: MAP_OUTPUT_BYTES;
--                        shuffle: REDUCE_SHUFFLE_BYTES; write: BYTES_WRITTEN).  Merge takes
--                        MAP_OUTPUT_BYTES first: the merge phase merges the whole map output
--                        (section 5: its data is M_sel x the map input), while a log line
--                        gives only the size of one partition's last merge pass; but 0 where
--                        the map spilled once (ingest's merge row says 0 bytes: Hadoop renames
--                        the one spill file and merges nothing)
--   combined_in          the combined span(s) that hold the phase when log lines could
--                        not split it (e.g. 'read+map+collect'), comma separated, else NULL
--
-- Map attempts of jobs without reduce tasks have no spill or merge (their output is
-- written directly) and are not expected to.

WITH ok AS (
    SELECT a.job_id, a.attempt_id, a.task_type
    FROM attempts a
    WHERE a.status = 'SUCCEEDED' AND a.task_type IN ('MAP', 'REDUCE')
        AND (CAST($job_name AS VARCHAR) IS NULL OR a.job_id IN (SELECT job_id FROM jobs WHERE name = $job_name))
),
_has_reduce AS (
    SELECT job_id, bool_or(task_type = 'REDUCE') AS has_reduce
    FROM ok GROUP BY job_id
),
_expected (task_type, phase, needs_reduce, counter_name) AS (
    VALUES ('MAP', 'read', false, 'BYTES_READ'),
           ('MAP', 'collect', false, 'MAP_OUTPUT_BYTES'),
           ('MAP', 'spill', true, 'MAP_OUTPUT_BYTES'),
           ('MAP', 'merge', true, 'MAP_OUTPUT_BYTES'),
           ('REDUCE', 'shuffle', false, 'REDUCE_SHUFFLE_BYTES'),
           ('REDUCE', 'write', false, 'BYTES_WRITTEN')
),
_want AS (
    SELECT ok.job_id, ok.attempt_id, ok.task_type, e.phase, e.counter_name
    FROM ok
    JOIN _expected e USING (task_type)
    JOIN _has_reduce h USING (job_id)
    WHERE NOT e.needs_reduce OR h.has_reduce
),
_rows AS (
    SELECT p.job_id, p.attempt_id,
           CASE WHEN p.phase = 'sort' THEN 'shuffle' ELSE p.phase END AS phase,
           p.phase AS raw_phase, coalesce(p.dur_us / 1000.0, p.dur_ms) AS dur_ms, p.data_bytes
    FROM attempt_phases p
    WHERE p.phase IN ('read', 'collect', 'spill', 'merge', 'shuffle', 'sort', 'write')
),
_measured AS (
    SELECT job_id, attempt_id, phase,
           sum(dur_ms) AS dur_ms,
           count(*) FILTER (WHERE dur_ms IS NULL) AS null_durs,
           CASE phase
               WHEN 'spill' THEN sum(data_bytes)
               WHEN 'shuffle' THEN max(data_bytes) FILTER (WHERE raw_phase = 'shuffle')
               ELSE max(data_bytes)
           END AS data_bytes
    FROM _rows GROUP BY job_id, attempt_id, phase
),
_combined AS (
    SELECT p.job_id, p.attempt_id, g.phase,
           string_agg(DISTINCT p.phase, ',' ORDER BY p.phase) AS combined_in
    FROM attempt_phases p
    JOIN (SELECT DISTINCT phase FROM _expected) g
      ON list_contains(string_split(p.phase, '+'), g.phase)
    WHERE contains(p.phase, '+')
    GROUP BY p.job_id, p.attempt_id, g.phase
),
_counter AS (
    SELECT job_id, attempt_id, counter_name, max(value) AS value
    FROM counters
    WHERE scope = 'attempt'
      AND counter_name IN ('BYTES_READ', 'MAP_OUTPUT_BYTES', 'REDUCE_SHUFFLE_BYTES', 'BYTES_WRITTEN')
      AND group_name NOT LIKE '%FileSystemCounter%'
    GROUP BY job_id, attempt_id, counter_name
)
SELECT w.job_id, w.attempt_id, w.task_type, w.phase,
       CASE WHEN m.null_durs > 0 THEN NULL ELSE m.dur_ms END AS dur_ms,
       CASE WHEN w.phase = 'merge' AND m.data_bytes = 0 THEN 0
            WHEN w.phase = 'merge' THEN coalesce(c.value, m.data_bytes)
            ELSE coalesce(m.data_bytes, c.value) END AS data_bytes,
       cb.combined_in
FROM _want w
LEFT JOIN _measured m USING (job_id, attempt_id, phase)
LEFT JOIN _counter c ON c.job_id = w.job_id AND c.attempt_id = w.attempt_id AND c.counter_name = w.counter_name
LEFT JOIN _combined cb ON cb.job_id = w.job_id AND cb.attempt_id = w.attempt_id AND cb.phase = w.phase
ORDER BY w.phase, w.job_id, w.attempt_id
