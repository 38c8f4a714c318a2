"""A partitioned store: one store per partition under a common root, read as one.

Layout (``phaseline ingest --partition-by day,cluster`` writes it; see ``docs/SCALE.md``)::

    <root>/day=2026-11-28/cluster=1526555215992/MANIFEST.json, data/, ...
    <root>/day=2026-11-28/cluster=1526555216001/...
    <root>/day=unknown/cluster=unknown/...

Each partition is a whole store of its own (its manifest, its atomic commits, its
quarantine, ``phaseline verify``); the root holds no manifest.  :func:`partitions`
finds them; :func:`connect_partitions` gives DuckDB the root as one: every view of
:meth:`~phaseline.store.Store.connect` (the tables, ``raw.<table>``,
``overlapping_sources``) as the union of the partitions' views, with one VARCHAR
column per key (``day``, ``cluster``) after the table's declared columns, as
:func:`phaseline.spark_views.register_store` gives Spark.  Each partition keeps its own
one account of jobs several of its sources describe (a history, its copies and
Rumen's parse of it land in one partition).

A query that filters on a key reads only the matching partitions' files: each
branch of the union carries its key as a constant, so DuckDB's optimizer folds a
branch whose constant fails the filter into an empty result before any scan
(``tests/phaseline/test_partitioned_store.py`` checks it with the other partitions'
files made unreadable).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from phaseline import schemas
from phaseline.errors import StoreError, first_line
from phaseline.store.directory import Store
from phaseline.store.sql import load
from phaseline.store.views import create_views, duckdb_memory

if TYPE_CHECKING:
    import duckdb

#: A partition's keys and values, outermost first: ``(("day", "2026-11-28"), ("cluster", "1526555215992"))``.
PartitionSpec = tuple[tuple[str, str], ...]

#: A key is a column name of every view; a value is one directory name.
_KEY = re.compile(r"[a-z_][a-z0-9_]*")
#: The view of the overlaps (a temporary table in one store's connection).
_OVERLAPS = "overlapping_sources"


def partition_dir(root: Path, spec: PartitionSpec) -> Path:
    """The directory of a partition: ``root/day=2026-11-28/cluster=1526555215992``.

    >>> partition_dir(Path("w"), (("day", "2026-11-28"), ("cluster", "1526555215992"))).as_posix()
    'w/day=2026-11-28/cluster=1526555215992'
    """
    path = root
    for key, value in spec:
        if not _KEY.fullmatch(key) or not value or "/" in value or value in (".", ".."):
            raise ValueError(f"{key}={value!r} cannot name a partition directory")
        path = path / f"{key}={value}"
    return path


def find_partitions(root: Path) -> list[tuple[PartitionSpec, Store]]:
    """The partition stores under ``root`` (directories named ``key=value``, nested, the innermost
    holding a store), in path order; ``[]`` when there are none.  Raises :class:`StoreError` when
    partitions have different keys.  Only ``key=value`` directories are entered."""
    found: list[tuple[PartitionSpec, Store]] = []
    for here, dirs, files in os.walk(root):
        path = Path(here)
        if path != root and "MANIFEST.json" in files:
            parts = path.relative_to(root).parts
            found.append((tuple((k, v) for k, _, v in (p.partition("=") for p in parts)), Store(path)))
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if _KEY.fullmatch(d.partition("=")[0]) and "=" in d)
    keys = {tuple(k for k, _ in spec) for spec, _ in found}
    if len(keys) > 1:
        raise StoreError(f"{root}: its partitions have different keys {sorted(keys)}; all must have the same")
    return found


def partitions(root: Path) -> list[tuple[PartitionSpec, Store]]:
    """The stores of a partitioned store (:func:`find_partitions`); ``root`` itself a store: one
    partition without keys.  Raises :class:`StoreError` when there is neither."""
    if Store(root).exists():
        return [((), Store(root))]
    found = find_partitions(root)
    if not found:
        raise StoreError(
            f"{root}: no store there, nor partitions (key=value directories holding stores) under it"
        )
    return found


def is_partitioned(root: Path) -> bool:
    """Whether ``root`` is no store itself but holds partition stores."""
    return not Store(root).exists() and root.is_dir() and bool(find_partitions(root))


def connect_partitions(
    root: Path,
    parts: Sequence[tuple[PartitionSpec, Store]] | None = None,
    *,
    where: Mapping[str, str] | None = None,
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection over a partitioned store, its views the partitions' unions.

    Each partition's own views (:meth:`Store.connect`'s, made by the same code) live in an
    attached in-memory catalog ``part<i>`` (``i`` in :func:`find_partitions` order):
    ``part0.main.jobs``, ``part0.raw.jobs``, ``part0.main.overlapping_sources``.  The default
    catalog's ``<table>``, ``raw.<table>`` and ``overlapping_sources`` are their unions,
    each branch with its keys as constant VARCHAR columns after the declared columns.

    A query's filter on a key prunes the other branches before they are scanned, but DuckDB
    binds every branch of a view it queries: each partition's listed files of the tables a
    query names are looked up, and the first one's footer read, whatever the filter.
    ``where`` (``{"day": "2026-11-28"}``) keeps only the matching partitions in the views,
    so nothing of the others is touched at all.
    """
    import duckdb  # loaded by duckdb_memory

    parts = list(parts) if parts is not None else find_partitions(root)
    if where:
        parts = [(spec, one) for spec, one in parts if all(dict(spec).get(k) == v for k, v in where.items())]
    if not parts:
        wanted = f" matching {dict(where)}" if where else ""
        raise StoreError(f"{root}: no partitions{wanted} (key=value directories holding stores) under it")
    con = duckdb_memory()
    (home,) = con.execute("SELECT current_database()").fetchone() or ("memory",)
    for i, (_, store) in enumerate(parts):
        try:
            con.execute(f"ATTACH ':memory:' AS part{i}")  # (i: an int)
            con.execute(f"USE part{i}")
            create_views(con, store.root, store.manifest())
            # the overlaps into the partition's own catalog: its one-account views find them there
            con.execute(load("keep_overlaps"))
        except duckdb.Error as exc:
            con.close()
            raise StoreError(
                f"{store.root}: the store's files cannot be read ({first_line(exc)}); see `phaseline verify`"
            ) from exc
    con.execute(f"USE {_identifier(home)}")
    con.execute("CREATE SCHEMA raw")
    for name, spec in schemas.TABLES.items():
        columns = ", ".join(_identifier(c) for c in spec.schema.names)
        for schema in ("main", "raw"):
            con.execute(_union_view(f"{schema}.{_identifier(name)}", columns, parts))
    con.execute(_union_view(f"main.{_OVERLAPS}", "*", parts))
    return con


def _union_view(name: str, columns: str, parts: Sequence[tuple[PartitionSpec, Store]]) -> str:
    """``CREATE VIEW name`` over every partition's view of the same name, keys as constants.

    A view's definition takes no bound parameters: a key is a checked identifier, a value an
    SQL string literal (quotes doubled); ``name`` and ``columns`` come from the declared schemas.
    """
    branches = []
    for i, (spec, _) in enumerate(parts):
        keys = "".join(f", CAST({_literal(v)} AS VARCHAR) AS {_identifier(k)}" for k, v in spec)
        branches.append(f"SELECT {columns}{keys} FROM part{i}.{name}")
    return f"CREATE VIEW {name} AS " + " UNION ALL ".join(branches)


def _identifier(name: str) -> str:
    if not _KEY.fullmatch(name):
        raise StoreError(f"{name!r} cannot name a column (a partition key: lower case, digits, _)")
    return f'"{name}"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
