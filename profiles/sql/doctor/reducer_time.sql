-- reducer_time: reducers too short for their number, or too long (Dr. Elephant's Reducer Time).
-- requires: _task_time
--
-- Dr. Elephant (ReducerTimeHeuristic.java, HeuristicConf.xml): short tasks are graded by their mean
-- runtime (10, 4, 2, 1 minutes: the shorter, the worse) capped by their number (50, 101, 500, 1000:
-- a few short tasks are harmless); long tasks by the mean runtime alone (15, 30, 60, 120 minutes).
-- The worse of the two is the finding.
--
-- Output columns
--   job_id, level, severity, value (the mean runtime in seconds), threshold, detail, recommendation,
--   skipped; too_short (whether the short-task grade is the finding's)
-- Parameters: $job_id, $short_runtime_min, $long_runtime_min, $num_tasks

SELECT * FROM _task_time('REDUCE', $job_id, $short_runtime_min, $long_runtime_min, $num_tasks);
