-- mapper_skew: mappers whose input (split) bytes fall into two unequal groups (Dr. Elephant's Mapper Skew).
-- requires: _task_skew
--
-- Dr. Elephant (app/com/linkedin/drelephant/mapreduce/heuristics/GenericDataSkewHeuristic.java,
-- app-conf/HeuristicConf.xml) grades the deviation between the two groups (2, 4, 8, 16), caps it by
-- the number of tasks (10, 50, 100, 200: a few tasks cannot waste much) and by the larger group's
-- mean against the block size (1/8, 1/4, 1/2, 1 of it: small tasks cannot either).
--
-- Output columns
--   job_id, level (0 None .. 4 Critical, NULL when skipped), severity
--   value            the deviation: the large group's mean input (split) bytes over the small group's
--   threshold        the deviation limits
--   detail, recommendation
--   skipped          why the job's data cannot support the heuristic (NULL when graded)
-- Parameters: $job_id, $deviation, $num_tasks, $files (fractions of $block_bytes, the default block size)

SELECT * FROM _task_skew('MAP', $job_id, $deviation, $num_tasks, $files, $block_bytes);
