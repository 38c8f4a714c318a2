-- overlapping_tables: the tables of which several sources describe some job (in overlapping_sources).
--
-- Output columns
--   table_name
SELECT DISTINCT table_name FROM overlapping_sources ORDER BY table_name
