-- Defines the temporary table macros over vertex_instances that the dataflow queries
-- share (installed before each of them, profiles.dataflow.reconstruct.dataflow_table):
--
-- _job_instances(job): the job's vertex instances from one source: the rebuilt ones
--   (source 'reconstruct', `phaseline dataflow`) when the job has any, else HiTune's
--   own (source 'hitune_csv', from its CSV reports).  Both describe the same threads:
--   added, a job counted its instances twice.
-- _instance_members(job, rebuilt_only): each of those instances once per thread: its
--   own (member_id = thread_id), and the other threads of a thread-group instance
--   (vertex_breakdown kind 'thread', HiTune section 5.3); with rebuilt_only, only the
--   rebuilt instances (none when the job has none).
CREATE OR REPLACE TEMP MACRO _job_instances(job) AS TABLE
SELECT * FROM vertex_instances
WHERE job_id = job
  AND (source = 'reconstruct') = (SELECT coalesce(bool_or(source = 'reconstruct'), false)
                                  FROM vertex_instances WHERE job_id = job);

CREATE OR REPLACE TEMP MACRO _instance_members(job, rebuilt_only) AS TABLE
WITH vi AS (
    SELECT * FROM _job_instances(job) WHERE NOT rebuilt_only OR source = 'reconstruct'
)
SELECT vi.*, vi.thread_id AS member_id FROM vi
UNION
SELECT vi.*, b.thread_id AS member_id
FROM vi
JOIN vertex_breakdown b
  ON b.job_id = vi.job_id AND b.attempt_id = vi.attempt_id AND b.vertex = vi.vertex
 AND b.kind = 'thread' AND b.source = vi.source;
