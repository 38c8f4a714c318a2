"""A partitioned store: one store per partition under a common root, read as one.

Layout (``phaseline ingest --partition-by day,cluster`` writes it; see ``docs/SCALE.md``)::

    <root>/day=2026-11-28/cluster=1526555215992/MANIFEST.json, data/, ...
    <root>/day=2026-11-28/cluster=1526555216001/...
    <root>/day=unknown/cluster=unknown/...

Each partition is a whole store of its own (its manifest, its atomic commits, its
quarantine, ``phaseline verify``); the root holds no manifest.  :func:`partitions`
finds them; :func:`connect_partitions` gives DuckDB the root as one: every view of
:meth:`~phaseline.store.Store.connect` (the tables, ``raw.<table>``,
``overlapping_sources``) over every partition, with one VARCHAR column per key
(``day``, ``cluster``) after the table's columns, as
:func:`phaseline.spark_views.register_store` gives Spark.  Each partition keeps its own
one account of jobs several of its sources describe (a history, its copies and
Rumen's parse of it land in one partition).

A query that filters on a key scans only the matching partitions' files: a table's
view is one Parquet scan of the partitions' live files (the manifests' list, not a
glob: files a commit retired are not read) that takes the keys from the ``key=value``
directories of their paths, and DuckDB drops the files whose keys fail the filter
before scanning (``tests/phaseline/test_partitioned_store.py`` checks the files
EXPLAIN ANALYZE names).  Binding the view still looks up every listed path and reads
the first one's footer (its schema), once per table a query names, whatever the filter
(measured: a damaged footer of another day fails a one-day query only when it is the
first listed); ``connect_partitions(where=...)`` lists only the matching partitions
(:func:`select_partitions`: keys ANDed, a key's values ORed; ``phaseline query --partition
day=2026-11-28``), so the others' manifests and files are never opened.  An earlier build, a union of each partition's own views,
bound every branch on every query: 60 partitions took 4.9 s to connect and 0.17 s per
one-day query, against 0.36 s and 0.007 s this way (docs/SCALE.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from phaseline import schemas
from phaseline.errors import StoreError, first_line
from phaseline.schemas import SourceStatus
from phaseline.store.directory import Store
from phaseline.store.manifest import EMPTY_MANIFEST, Manifest, schema_fingerprint
from phaseline.store.sql import load, render
from phaseline.store.views import create_parquet_view, create_views, duckdb_memory, sql_string

if TYPE_CHECKING:
    import duckdb

#: A partition's keys and values, outermost first: ``(("day", "2026-11-28"), ("cluster", "1526555215992"))``.
PartitionSpec = tuple[tuple[str, str], ...]

#: Which partitions to read: each key's values (``{"day": ("2026-11-27", "2026-11-28")}``); the keys
#: are ANDed, a key's values ORed (:func:`select_partitions`).
PartitionFilter = Mapping[str, Collection[str]]

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


def partition_filter(pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """``(key, value)`` pairs (``--partition day=2026-11-28``, repeated) as a :data:`PartitionFilter`.

    >>> partition_filter([("day", "2026-11-27"), ("cluster", "17"), ("day", "2026-11-28")])
    {'day': ('2026-11-27', '2026-11-28'), 'cluster': ('17',)}
    """
    where: dict[str, tuple[str, ...]] = {}
    for key, value in pairs:
        if value not in where.get(key, ()):
            where[key] = (*where.get(key, ()), value)
    return where


def describe_filter(where: PartitionFilter) -> str:
    """A filter as its options read: ``day=2026-11-27 or day=2026-11-28, and cluster=17``.

    >>> describe_filter({"day": ("2026-11-27", "2026-11-28"), "cluster": ("17",)})
    'day=2026-11-27 or day=2026-11-28, and cluster=17'
    """
    return ", and ".join(" or ".join(f"{k}={v}" for v in _values(vs)) for k, vs in where.items())


def _values(values: str | Collection[str]) -> tuple[str, ...]:
    return (values,) if isinstance(values, str) else tuple(values)


def select_partitions(root: Path, where: PartitionFilter | None = None) -> list[tuple[PartitionSpec, Store]]:
    """The stores of :func:`partitions` that ``where`` keeps (all of them without one), found from
    the directory names alone: no other partition's manifest or file is opened.

    Raises :class:`StoreError` naming ``root`` when ``where`` is given and ``root`` is a store of
    its own (it has no partitions to choose), names a key the partitions do not have (listing
    theirs) or a value no partition has (listing the key's values there), or keeps no partition.
    """
    if where and Store(root).exists():
        raise StoreError(
            f"{root} is a store, not a partitioned one (key=value directories of stores): it has no "
            f"partitions to choose {describe_filter(where)} from; read it whole"
        )
    return _narrow(root, partitions(root), where)


def _narrow(
    root: Path, parts: Sequence[tuple[PartitionSpec, Store]], where: PartitionFilter | None
) -> list[tuple[PartitionSpec, Store]]:
    """The partitions of ``parts`` (a partitioned root's) that ``where`` keeps (see :func:`select_partitions`)."""
    if not where:
        return list(parts)
    keys = [k for k, _ in parts[0][0]] if parts else []
    for key, values in where.items():
        if key not in keys:
            raise StoreError(
                f"{root}: its partitions have no key {key!r}; their keys are {', '.join(keys) or 'none'}"
            )
        have = sorted({dict(spec)[key] for spec, _ in parts})
        if missing := [v for v in _values(values) if v not in have]:
            raise StoreError(
                f"{root}: no partition has {' or '.join(f'{key}={v}' for v in missing)}; "
                f"its values of {key} are {', '.join(have)}"
            )
    kept = [(s, one) for s, one in parts if all(dict(s)[k] in _values(vs) for k, vs in where.items())]
    if not kept:
        have_specs = ", ".join("/".join(f"{k}={v}" for k, v in s) for s, _ in parts)
        raise StoreError(f"{root}: no partition has {describe_filter(where)}; its partitions are {have_specs}")
    return kept


def is_partitioned(root: Path) -> bool:
    """Whether ``root`` is no store itself but holds partition stores."""
    return not Store(root).exists() and root.is_dir() and bool(find_partitions(root))


def connect_partitions(
    root: Path,
    parts: Sequence[tuple[PartitionSpec, Store]] | None = None,
    *,
    where: PartitionFilter | None = None,
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection over a partitioned store, its views the partitions' unions.

    ``raw.<table>`` reads every partition's live files (each manifest's) as one Parquet scan,
    the keys read from the ``key=value`` directories as VARCHAR columns after the table's:
    a filter on a key drops the other partitions' files from the scan (see the module).
    ``<table>`` holds the same rows but for jobs that several sources of one partition
    describe: there the partition's own one account of them (its :meth:`Store.connect`
    views, opened only for partitions whose ``sources.job_ids`` share a job, for those jobs
    only) replaces their raw rows, as :func:`phaseline.spark_views.register_store` does on
    Spark.  ``overlapping_sources`` lists every partition's, keys included.

    ``where`` (``{"day": "2026-11-28"}``, or ``{"day": ("2026-11-27", "2026-11-28")}``) keeps only
    the matching partitions (:func:`select_partitions`, its errors too): the others' manifests
    and files are not even listed, nor looked up when a query binds.
    """
    import duckdb  # loaded by duckdb_memory

    parts = _narrow(root, list(parts) if parts is not None else find_partitions(root), where)
    if not parts:
        raise StoreError(f"{root}: no partitions (key=value directories holding stores) under it")
    keys = [k for k, _ in parts[0][0]]
    for key in keys:
        _identifier(key)
    files: dict[str, list[tuple[str, bool]]] = {}  # table -> (path, of the current schema)
    current = {name: schema_fingerprint(spec) for name, spec in schemas.TABLES.items()}
    overlaps: list[pa.Table] = []
    kept: dict[str, list[pa.Table]] = {}
    for spec, store in parts:
        manifest = store.manifest()
        for f in manifest.files:
            files.setdefault(f.table, []).append((str(store.root / f.path), f.schema == current[f.table]))
        if manifest.sources_file is not None:  # (every declared column: unified by name, as one store's)
            files.setdefault("sources", []).append((str(store.root / manifest.sources_file), False))
        if shared_jobs(store.sources(manifest), manifest):
            _one_account(store, manifest, spec, overlaps, kept)
    con = duckdb_memory()
    try:
        _create_views(con, keys, files, overlaps, kept)
    except duckdb.Error as exc:
        con.close()
        raise StoreError(
            f"{root}: the partitions' files cannot be read ({first_line(exc)}); see `phaseline verify` "
            "in each partition"
        ) from exc
    return con


def shared_jobs(sources: pa.Table, manifest: Manifest | None = None) -> bool:
    """Whether two landed sources name one job (``sources.job_ids``; unknown -> assume so), and,
    with the ``manifest``, both have rows in one table of units (:attr:`~phaseline.schemas.TableSpec.unit`;
    a job's ``.jhist`` and its ``_conf.xml`` share only ``events``).  Only then can the views set
    rows aside."""
    tables_of: dict[str, set[str]] = {}  # source -> the tables of units it has rows in (those are ranked)
    for f in manifest.files if manifest is not None else ():
        for key in f.sources if schemas.table(f.table).unit else ():
            tables_of.setdefault(key, set()).add(f.table)
    seen: dict[str, list[tuple[str, set[str] | None]]] = {}
    rows = zip(
        sources.column("path").to_pylist(),
        sources.column("status").to_pylist(),
        sources.column("rows_written").to_pylist(),
        sources.column("sha256").to_pylist(),
        sources.column("job_ids").to_pylist(),
        strict=True,
    )
    for path, status, written, sha, job_ids in rows:
        if status not in (SourceStatus.LANDED, SourceStatus.PARTIAL) or not written:
            continue
        if job_ids is None:
            return True  # ingested before the column existed: the store's views read the data to know
        tables = tables_of.get(path, set()) if manifest is not None else None
        for job in job_ids:
            others = seen.setdefault(job, [])
            if any(other != sha and (tables is None or had is None or tables & had) for other, had in others):
                return True
            others.append((sha, tables))
    return False


def _keyed(table: pa.Table, spec: PartitionSpec) -> pa.Table:
    for key, value in spec:
        table = table.append_column(key, pa.array([value] * table.num_rows, pa.string()))
    return table


def _one_account(
    store: Store,
    manifest: Manifest,
    spec: PartitionSpec,
    overlaps: list[pa.Table],
    kept: dict[str, list[pa.Table]],
) -> None:
    """A partition's ``overlapping_sources`` and, per table, the rows its views keep of those jobs."""
    con = store.connect(manifest)
    try:
        found = con.sql(f"SELECT * FROM {_OVERLAPS}").to_arrow_table()
        overlaps.append(_keyed(found, spec))
        for name in sorted(set(found.column("table_name").to_pylist())):
            rows = con.sql(render("kept_rows", table=name), params={"table_name": name}).to_arrow_table()
            kept.setdefault(name, []).append(_keyed(rows, spec))
    finally:
        con.close()


def _create_views(
    con: duckdb.DuckDBPyConnection,
    keys: Sequence[str],
    files: Mapping[str, Sequence[tuple[str, bool]]],
    overlaps: Sequence[pa.Table],
    kept: Mapping[str, Sequence[pa.Table]],
) -> None:
    """The root's ``raw`` views, ``overlapping_sources`` and the one-account views (see
    :func:`connect_partitions`)."""
    key_fields = [pa.field(k, pa.string()) for k in keys]
    con.execute("CREATE SCHEMA raw")
    for name, spec in schemas.TABLES.items():
        listed = files.get(name)
        if listed:
            paths, uniform = [p for p, _ in listed], all(u for _, u in listed)
            create_parquet_view(con, f'raw."{name}"', paths, uniform=uniform, spec=spec, keys=keys)
        else:  # no rows yet: an empty table of the declared types and the keys
            con.register("_empty", pa.schema([*spec.schema, *key_fields]).empty_table())
            con.execute(render("empty_table", table=name))
            con.unregister("_empty")
    if not overlaps:  # no partition has any: the columns one store's overlapping_sources has
        empty = duckdb_memory()
        try:
            create_views(empty, Path(), EMPTY_MANIFEST)
            none = empty.sql(f"SELECT * FROM {_OVERLAPS}").to_arrow_table()
            overlaps = [_keyed(none, tuple((k, "") for k in keys))]
        finally:
            empty.close()
    con.register("_overlaps", pa.concat_tables(overlaps, promote_options="default"))
    con.execute(load("keyed_overlaps"))
    con.unregister("_overlaps")
    con.execute("CREATE SCHEMA _kept")
    for name in schemas.TABLES:
        if name not in kept:
            con.execute(render("plain_view", table=name))
            continue
        con.register("_kept", pa.concat_tables(kept[name], promote_options="default"))
        con.execute(render("kept_table", table=name))
        con.unregister("_kept")
        con.execute(_account_view(name, keys))


def _account_view(name: str, keys: Sequence[str]) -> str:
    """The view of a table some partition has overlapping jobs in: the raw rows but those jobs'
    (in their partition), and the rows the partition's own views keep of them.

    A view's definition takes no bound parameters: ``name`` is a declared table's, the keys
    are checked identifiers.
    """
    if name not in schemas.TABLES:
        raise ValueError(f"{name!r} is not a declared table")
    same = "".join(f" AND o.{_identifier(k)} = r.{_identifier(k)}" for k in keys)
    return (
        f'CREATE VIEW main."{name}" AS SELECT r.* FROM raw."{name}" AS r WHERE NOT EXISTS ('
        f"SELECT 1 FROM {_OVERLAPS} AS o "
        f"WHERE o.table_name = {sql_string(name)} AND o.job_id = r.job_id{same}) "
        f'UNION ALL BY NAME SELECT * FROM _kept."{name}"'
    )


def _identifier(name: str) -> str:
    if not _KEY.fullmatch(name):
        raise StoreError(f"{name!r} cannot name a column (a partition key: lower case, digits, _)")
    return f'"{name}"'

