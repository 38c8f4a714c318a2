-- verify_counts: jobs with more successful map (or reduce) tasks than the job's own total, or
-- another number than it says finished.
--
-- Output columns
--   job_id, task_type, n (successful tasks), total, finished (as the job record says)
WITH done AS (
    SELECT job_id, task_type, count(DISTINCT task_id) AS n FROM tasks
    WHERE status = 'SUCCEEDED' AND task_type IN ('MAP', 'REDUCE') GROUP BY ALL
), job AS (
    SELECT job_id, max(total_maps) AS total_maps, max(total_reduces) AS total_reduces,
        max(finished_maps) AS finished_maps, max(finished_reduces) AS finished_reduces
    FROM jobs GROUP BY job_id
), said AS (
    SELECT d.job_id, d.task_type, d.n,
        if(d.task_type = 'MAP', j.total_maps, j.total_reduces) AS total,
        if(d.task_type = 'MAP', j.finished_maps, j.finished_reduces) AS finished
    FROM done AS d JOIN job AS j USING (job_id)
)
SELECT job_id, task_type, n, total, finished FROM said
WHERE n > total OR n <> finished ORDER BY job_id, task_type
