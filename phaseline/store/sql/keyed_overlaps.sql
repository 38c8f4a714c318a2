-- keyed_overlaps: a partitioned store's overlapping_sources (from the registered "_overlaps": every
-- partition's, the keys after its columns).
--
-- Output columns
--   those of overlapping_sources, then one VARCHAR column per partition key
CREATE TABLE main.overlapping_sources AS SELECT * FROM "_overlaps"
