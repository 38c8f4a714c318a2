-- empty_table: a table no source has rows of yet, with its declared types (from the registered "_empty").
CREATE TABLE raw.{{table}} AS SELECT * FROM "_empty"
