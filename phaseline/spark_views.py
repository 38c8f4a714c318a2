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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from phaseline import schemas
from phaseline.errors import StoreError, first_line
from phaseline.schemas import SourceStatus
from phaseline.store import Manifest, Store

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


def shared_jobs(sources: pa.Table) -> bool:
    """Whether two landed sources name one job (``sources.job_ids``; unknown -> assume so)."""
    seen: dict[str, str] = {}
    rows = zip(
        sources.column("status").to_pylist(),
        sources.column("rows_written").to_pylist(),
        sources.column("sha256").to_pylist(),
        sources.column("job_ids").to_pylist(),
        strict=True,
    )
    for status, written, sha, job_ids in rows:
        if status not in (SourceStatus.LANDED, SourceStatus.PARTIAL) or not written:
            continue
        if job_ids is None:
            return True  # ingested before the column existed: the store's views read the data to know
        for job in job_ids:
            if seen.setdefault(job, sha) != sha:
                return True
    return False


def register_store(spark: SparkSession, store: Store, manifest: Manifest | None = None) -> Manifest:
    """Register the store's tables as temporary views of ``spark`` (see the module); returns the manifest read."""
    manifest = manifest or store.manifest()
    by_table: dict[str, list[str]] = {}
    for f in manifest.files:
        by_table.setdefault(f.table, []).append(f.path)
    if manifest.sources_file is not None:
        by_table["sources"] = [manifest.sources_file]
    try:
        for name, spec in schemas.TABLES.items():
            _read_table(spark, store, spec, by_table.get(name, [])).createOrReplaceTempView(RAW_PREFIX + name)
    except Exception as exc:  # Spark's AnalysisException: a file gone or of another type
        raise StoreError(f"{store.root}: Spark cannot read the store's files ({first_line(exc)}); "
                         "see `phaseline verify`") from exc  # fmt: skip
    overlapping = _one_account(spark, store, manifest) if shared_jobs(store.sources(manifest)) else {}
    for name in schemas.TABLES:
        view = spark.table(RAW_PREFIX + name)
        kept = overlapping.get(name)
        if kept is not None:  # rows of the overlapping jobs: the store's one account of them
            overlaps = spark.table(OVERLAPS_VIEW)
            jobs = overlaps.where(overlaps["table_name"] == name).select("job_id").distinct()
            view = view.join(jobs, "job_id", "left_anti").select(*view.columns).unionByName(kept)
        view.createOrReplaceTempView(name)
    if OVERLAPS_VIEW not in {t.name for t in spark.catalog.listTables()}:
        spark.createDataFrame([], _overlaps_schema()).createOrReplaceTempView(OVERLAPS_VIEW)
    return manifest


def _overlaps_schema() -> StructType:
    from pyspark.sql.types import BooleanType, LongType, StringType, StructField, StructType

    return StructType([
        StructField("table_name", StringType()), StructField("job_id", StringType()),
        StructField("source_sha256", StringType()), StructField("path", StringType()),
        StructField("format", StringType()), StructField("rows", LongType()),
        StructField("preference", LongType()), StructField("stand_in", BooleanType()),
        StructField("other_run", BooleanType()), StructField("submit_ms", LongType()),
    ])  # fmt: skip


def _one_account(spark: SparkSession, store: Store, manifest: Manifest) -> dict[str, DataFrame]:
    """Per table with overlapping jobs, the rows the store's views keep of those jobs (as Spark frames);
    registers ``overlapping_sources``."""
    con = store.connect(manifest)
    try:
        overlaps = con.sql(
            f"SELECT {', '.join(_overlaps_schema().names)} FROM overlapping_sources"
        ).to_arrow_table()
        spark.createDataFrame(overlaps.to_pylist(), _overlaps_schema()).createOrReplaceTempView(OVERLAPS_VIEW)
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
        return kept
    finally:
        con.close()
