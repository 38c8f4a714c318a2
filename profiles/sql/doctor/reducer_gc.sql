-- reducer_gc: reducers spending much of their CPU time in garbage collection (Dr. Elephant's Reducer GC).
-- requires: _task_gc
--
-- Dr. Elephant (GenericGCHeuristic.java, HeuristicConf.xml) grades the mean GC time over the mean
-- CPU time (0.01, 0.02, 0.03, 0.04), capped by the mean task runtime (5, 10, 12, 15 minutes: GC in
-- short tasks costs little).
--
-- Output columns
--   job_id, level, severity, value (GC_TIME_MILLIS / CPU_MILLISECONDS, means over the reducers),
--   threshold, detail, recommendation, skipped
-- Parameters: $job_id, $gc_ratio, $runtime_min

SELECT * FROM _task_gc('REDUCE', $job_id, $gc_ratio, $runtime_min);
