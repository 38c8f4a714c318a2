-- reducer_memory: reducer containers much larger than the memory the reducers used (Dr. Elephant's Reducer Memory).
-- requires: _task_memory
--
-- Dr. Elephant (GenericMemoryHeuristic.java, HeuristicConf.xml) grades the mean peak physical
-- memory over the container size (0.6, 0.5, 0.4, 0.3: the less used, the worse), capped by the
-- container size against a default (1, 1.5, 2, 2.5 times 2048 MB: small containers waste little).
-- The container is mapreduce.reduce.memory.mb (mapred.job.reduce.memory.mb), the default where unset or
-- not positive.
--
-- Output columns
--   job_id, level, severity, value (mean PHYSICAL_MEMORY_BYTES / container bytes)
--   threshold, detail, recommendation, skipped
-- Parameters: $job_id, $memory_ratio, $container_memory (multiples of $container_default_mb)

SELECT * FROM _task_memory('REDUCE', $job_id, $memory_ratio, $container_memory, $container_default_mb);
