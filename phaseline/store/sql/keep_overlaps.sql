-- keep_overlaps: a partition's overlapping_sources moved from the temporary table into the
-- partition's own catalog (the current one), where its one-account views find it; the next
-- partition's views then make their own temporary table.
CREATE TABLE main.overlapping_sources AS SELECT * FROM temp.main.overlapping_sources;
DROP TABLE temp.main.overlapping_sources
