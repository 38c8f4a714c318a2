"""The mechanism of reading a store: DuckDB views over the Parquet files a manifest names.

Schema ``raw`` gets one view per declared table over every row of every source
(an empty table of the declared types where no source has rows); the default
schema's views over those are the one-account policy's
(:mod:`phaseline.store.one_account`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from phaseline import schemas
from phaseline.store.manifest import DataFile, Manifest, schema_fingerprint
from phaseline.store.one_account import create_account_views
from phaseline.store.sql import render

if TYPE_CHECKING:
    import duckdb


def duckdb_memory() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection; duckdb is imported here, so an ingest that never
    compacts or queries does not load it (~60 ms of start-up)."""
    import duckdb

    return duckdb.connect(":memory:")


def create_views(con: duckdb.DuckDBPyConnection, root: Path, manifest: Manifest) -> None:
    """The ``raw`` views of a generation of the store at ``root``, then the one-account views."""
    con.execute("CREATE SCHEMA raw")
    by_table: dict[str, list[DataFile]] = {}
    for f in manifest.files:
        by_table.setdefault(f.table, []).append(f)
    for name, spec in schemas.TABLES.items():
        files = by_table.get(name)
        if name == "sources" and manifest.sources_file is not None:
            # every declared column, so that the policy may name those added since (sources.job_ids)
            create_parquet_view(con, f'raw."{name}"', [str(root / manifest.sources_file)], uniform=False, spec=spec)
        elif files and name != "sources":
            current = schema_fingerprint(spec)
            uniform = all(f.schema == current for f in files)
            paths = [str(root / f.path) for f in files]
            create_parquet_view(con, f'raw."{name}"', paths, uniform=uniform, spec=spec)
        else:  # no rows yet: an empty table of the declared types (nothing left registered)
            con.register("_empty", spec.schema.empty_table())
            con.execute(render("empty_table", table=name))
            con.unregister("_empty")
    shared = [
        name
        for name, spec in schemas.TABLES.items()
        if spec.unit and len({key for f in by_table.get(name, ()) for key in f.sources}) > 1
    ]
    create_account_views(con, shared)


def create_parquet_view(
    con: duckdb.DuckDBPyConnection, name: str, paths: Sequence[str], *, uniform: bool,
    spec: schemas.TableSpec | None = None, keys: Sequence[str] = (),
) -> None:
    """A view (``name`` is quoted SQL) over Parquet files; files of older schemas are unified by column name,
    and a column of ``spec`` that none of them has is NULL (queries may name every declared column).

    ``keys``: the files' paths hold ``key=value`` directories (a partitioned store's); each key is
    a VARCHAR column after the others, and a filter on it leaves the other directories' files unread.

    A view's definition takes no bound parameters: each path is written as an SQL string
    literal (quotes doubled); ``name`` and the added columns come from the declared schemas,
    ``keys`` from checked identifiers (:mod:`phaseline.store.partitioned`).
    """
    listing = ", ".join(sql_string(p) for p in paths)
    hive = ", hive_partitioning = false"  # (DuckDB's default reads key=value dirs of any path as columns)
    if keys:
        typed = ", ".join(f"{sql_string(k)}: VARCHAR" for k in keys)
        hive = f", hive_partitioning = true, hive_types = {{{typed}}}"
    source = f"read_parquet([{listing}]{'' if uniform else ', union_by_name = true'}{hive})"
    added = ""
    if not uniform and spec is not None:
        have = set(con.sql(f"SELECT * FROM {source} LIMIT 0").columns)
        missing = pa.schema([f for f in spec.schema if f.name not in have])
        if len(missing):
            types = con.from_arrow(missing.empty_table()).dtypes
            added = "".join(f', CAST(NULL AS {t}) AS "{f.name}"' for f, t in zip(missing, types, strict=True))
    quoted = ", ".join(f'"{k}"' for k in keys)
    star = f"* EXCLUDE ({quoted}){added}, {quoted}" if keys else f"*{added}"
    con.execute(f"CREATE VIEW {name} AS SELECT {star} FROM {source}")


def sql_string(text: str) -> str:
    """``text`` as a SQL string literal (its quotes doubled), for statements that take no parameters
    (a view's definition)."""
    return "'" + text.replace("'", "''") + "'"
