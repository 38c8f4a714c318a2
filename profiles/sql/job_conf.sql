-- job_conf: the configuration properties of each job (one value per key).
--
-- Output columns
--   job_id, key, value, source (where the property was set, if the conf file says)

CREATE OR REPLACE TEMP VIEW job_conf AS
-- (a key set twice: the row whose source sorts first, its value and its source together)
SELECT job_id, key,
    first(value ORDER BY source NULLS LAST, value) AS value,
    first(source ORDER BY source NULLS LAST, value) AS source
FROM conf
GROUP BY job_id, key;

SELECT * FROM job_conf WHERE job_id = $job_id ORDER BY key;
