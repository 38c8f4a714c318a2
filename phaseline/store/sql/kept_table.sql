-- kept_table: a partitioned store's kept rows of one table (from the registered "_kept": every
-- partition's kept_rows, the keys after them), which its view adds to the other jobs' raw rows.
CREATE TABLE _kept.{{table}} AS SELECT * FROM "_kept"
