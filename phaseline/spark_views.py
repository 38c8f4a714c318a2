"""The store's tables as Spark SQL temporary views: what :meth:`Store.connect` gives DuckDB, for Spark.

For each table of :data:`phaseline.schemas.TABLES`, :func:`register_store` reads the
Parquet files the manifest names (the generation it opened) with the declared
schema (a column an older file lacks is NULL, as DuckDB's ``union_by_name``) and
registers two temporary views: ``raw_<table>`` (every source's rows; DuckDB's
``raw.<table>``: Spark has no schema for temporary views) and ``<table>``, the view
to query.  The two hold the same rows unless several sources describe one job
(a history and Rumen's parse of it); then ``<table>`` keeps one account of it, by
the store's own rule: the store's DuckDB views pick those jobs' rows (a job's rows
only, the overlapping jobs are few), and they replace the raw rows of the same
jobs.  ``overlapping_sources`` is registered too, as in DuckDB.

Whether any job is shared is read from ``sources.job_ids`` without reading the data,
so a store without overlaps never opens DuckDB here.

A store may be partitioned, as one store per partition under a common root
(``<root>/day=2026-11-28/cluster=1526555215992/``, written by ``phaseline ingest
--partition-by``; :mod:`phaseline.store.partitioned`): the views are then the partitions'
unions with the keys as columns, as DuckDB's, and a query that filters on a key reads only
that partition's files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from phaseline import schemas
from phaseline.errors import StoreError, first_line
from phaseline.store import Manifest, PartitionFilter, Store, select_partitions
from phaseline.store.partitioned import shared_jobs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

#: The prefix of the views of every source's rows (DuckDB: the ``raw`` schema).
RAW_PREFIX = "raw_"
OVERLAPS_VIEW = "overlapping_sources"


def spark_schema(spec: schemas.TableSpec) -> StructType:
    """A table's declared schema as a Spark ``StructType``."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(spec.schema)


def _read_table(spark: SparkSession, store: Store, spec: schemas.TableSpec, paths: list[str]) -> DataFrame:
    if not paths:
        return spark.createDataFrame([], spark_schema(spec))
    return spark.read.schema(spark_schema(spec)).parquet(*(str(store.root / p) for p in paths))


@dataclass(frozen=True, slots=True)
class _Frames:
    """One store's tables as Spark frames: every source's rows, the one-account rows, the overlaps."""

    raw: dict[str, DataFrame]
    main: dict[str, DataFrame]
    overlaps: DataFrame


def _store_frames(spark: SparkSession, store: Store, manifest: Manifest) -> _Frames:
    by_table: dict[str, list[str]] = {}
    for f in manifest.files:
        by_table.setdefault(f.table, []).append(f.path)
    if manifest.sources_file is not None:
        by_table["sources"] = [manifest.sources_file]
    try:
        raw = {
            name: _read_table(spark, store, spec, by_table.get(name, []))
            for name, spec in schemas.TABLES.items()
        }
    except Exception as exc:  # Spark's AnalysisException: a file gone or of another type
        raise StoreError(f"{store.root}: Spark cannot read the store's files ({first_line(exc)}); "
                         "see `phaseline verify`") from exc  # fmt: skip
    if shared_jobs(store.sources(manifest), manifest):
        overlaps, kept = _one_account(spark, store, manifest)
    else:
        overlaps, kept = spark.createDataFrame([], _overlaps_schema()), {}
    main = dict(raw)
    for name, rows in kept.items():  # rows of the overlapping jobs: the store's one account of them
        jobs = overlaps.where(overlaps["table_name"] == name).select("job_id").distinct()
        view = raw[name]
        main[name] = view.join(jobs, "job_id", "left_anti").select(*view.columns).unionByName(rows)
    return _Frames(raw, main, overlaps)


def register_store(spark: SparkSession, store: Store | Path, *, where: PartitionFilter | None = None) -> int:
    """Register a store's tables as temporary views of ``spark`` (see the module); returns the partitions read.

    ``store`` may be a partitioned store (:func:`phaseline.store.partitions`): each view is then the union of
    every partition's, with one string column per partition key (``day``, ``cluster``) after
    the table's columns.  A query that filters on a key reads only the matching partitions'
    files (Spark folds the other branches of the union away before reading); each
    partition keeps its own one account of jobs that several of its sources describe.
    ``where`` (else a :class:`Store`'s own ``where``) keeps only some partitions
    (:func:`phaseline.store.select_partitions`, its errors too): the others' manifests and
    files are never opened.
    """
    from pyspark.sql import functions as F

    root = store.root if isinstance(store, Store) else store
    if where is None and isinstance(store, Store):
        where = store.where
    stores = select_partitions(root, where)
    unions: dict[str, list[DataFrame]] = {}
    for spec, one in stores:
        got = _store_frames(spark, one, one.manifest())
        named = {**{RAW_PREFIX + n: f for n, f in got.raw.items()}, **got.main, OVERLAPS_VIEW: got.overlaps}
        for view, frame in named.items():
            for key, value in spec:
                frame = frame.withColumn(key, F.lit(value))
            unions.setdefault(view, []).append(frame)
    for view, parts in unions.items():
        union = parts[0]
        for part in parts[1:]:
            union = union.unionByName(part)
        union.createOrReplaceTempView(view)
    return len(stores)


def _overlaps_schema() -> StructType:
    from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType

    return StructType([
        StructField("table_name", StringType()), StructField("job_id", StringType()),
        StructField("source_sha256", StringType()), StructField("path", StringType()),
        StructField("format", StringType()), StructField("rows", LongType()),
        StructField("preference", LongType()), StructField("stand_in", BooleanType()),
        StructField("other_run", BooleanType()), StructField("submit_ms", LongType()),
    ])  # fmt: skip


def _one_account(
    spark: SparkSession, store: Store, manifest: Manifest
) -> tuple[DataFrame, dict[str, DataFrame]]:
    """The store's ``overlapping_sources``, and per table with overlapping jobs the rows its views
    keep of those jobs, as Spark frames (computed by the store's DuckDB views, for those jobs only)."""
    con = store.connect(manifest)
    try:
        overlaps = con.sql(
            f"SELECT {', '.join(_overlaps_schema().names)} FROM overlapping_sources"
        ).to_arrow_table()
        kept: dict[str, DataFrame] = {}
        for name in sorted(set(overlaps.column("table_name").to_pylist())):
            spec = schemas.table(name)
            rows = con.sql(
                f'SELECT * FROM main."{name}" WHERE job_id IN '  # (a declared table's name)
                "(SELECT job_id FROM overlapping_sources WHERE table_name = $name)",
                params={"name": name},
            ).to_arrow_table()
            rows = pa.Table.from_arrays(
                [rows.column(f.name).cast(f.type) for f in spec.schema], schema=spec.schema
            )
            kept[name] = spark.createDataFrame(rows.to_pylist(), spark_schema(spec))
        return spark.createDataFrame(overlaps.to_pylist(), _overlaps_schema()), kept
    finally:
        con.close()
