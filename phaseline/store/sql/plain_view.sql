-- plain_view: a table's view that keeps every row of every source (no two sources describe one of its units).
CREATE VIEW main.{{table}} AS SELECT * FROM raw.{{table}}
