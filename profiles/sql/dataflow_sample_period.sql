-- The sampling period of a job's point samples (no duration), estimated as the
-- median gap between consecutive samples of the same thread trace.
-- A trace is one thread of one attempt (HiTune, Dai et al. 2011, section 5.3: "based
-- on the Target field (i.e., the node name, the task name and the Java thread ID)"
-- the engine "constructs a sampling trace for each thread"), keyed by host, attempt
-- and thread id: a thread id is only a JVM's, and every task JVM's main thread is 1,
-- so two attempts running at once on one host would interleave into one trace whose
-- gaps are a fraction of the period (and each wait, divided by the period, would
-- count too many idle samples).  The attempt is the one the sample is attributed to
-- (table macro _sample_attempts, dataflow_sample_attempts.sql); samples of threads
-- bound to no attempt form one trace per host and thread id.
-- Parameters: $job_id.  Output: period_ms (NULL when no trace has two samples).
WITH gaps AS (
    SELECT ts_ms - lag(ts_ms) OVER (PARTITION BY host, attempt_id, thread_id ORDER BY ts_ms) AS gap
    FROM _sample_attempts($job_id)
    WHERE duration_ms = 0
)
SELECT median(gap) AS period_ms FROM gaps WHERE gap > 0
