"""The store's views: typed when empty, the tables and nothing else, columns added later, one account of a job."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import ingest.pipeline as pipeline
from phaseline import schemas
from phaseline.store import Store
from phaseline.verify import verify_store
from tests.phaseline.store_doubles import (
    _toy_format,  # noqa: F401 - autouse: every test here reads the toy format
    write,
)


def test_empty_store_has_typed_empty_views(store_dir: Path) -> None:
    con = Store(store_dir).connect()
    assert con.execute("SELECT count(*) FROM attempts").fetchone() == (0,)
    assert "map_finish_ms" in con.sql("SELECT * FROM attempts").columns


def test_connection_shows_the_store_tables_and_nothing_of_its_making(tmp_path: Path, store_dir: Path) -> None:
    # `phaseline query "SHOW TABLES"` is a user's first look: the tables (most empty here, some
    # with rows) and the documented overlapping_sources, no helper relation of connect's own
    pipeline.ingest_paths([write(tmp_path / "a.toy", "j1,first")], Store(store_dir))
    con = Store(store_dir).connect()
    shown = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
    assert shown == set(schemas.TABLES) | {"overlapping_sources"}
    assert con.execute("SELECT count(*) FROM attempts").fetchone() == (0,)  # empty, still typed
    assert [str(t) for t in con.sql("SELECT finish_ms FROM raw.attempts").types] == ["BIGINT"]


def test_a_column_added_after_a_file_was_written_reads_as_null(
    tmp_path: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store written before a column existed (attempt_phases.dur_us came in session 27): its views still
    # have every declared column, of its declared type, NULL for the older files' rows.
    spec = schemas.TABLES["jobs"]
    older = dataclasses.replace(spec, schema=spec.schema.remove(spec.schema.get_field_index("diagnostics")))
    monkeypatch.setitem(schemas.TABLES, "jobs", older)
    pipeline.ingest_paths([write(tmp_path / "a.toy", "j1,first")], Store(store_dir))
    monkeypatch.setitem(schemas.TABLES, "jobs", spec)
    con = Store(store_dir).connect()
    assert con.execute("SELECT job_id, diagnostics FROM jobs").fetchall() == [("j1", None)]
    assert [str(t) for t in con.sql("SELECT diagnostics FROM raw.jobs").types] == ["VARCHAR"]
    # ... and beside files of the current schema, which have it
    pipeline.ingest_paths([write(tmp_path / "b.toy", "j2,second")], Store(store_dir))
    con = Store(store_dir).connect()
    assert con.execute("SELECT job_id, name FROM jobs WHERE diagnostics IS NULL ORDER BY 1").fetchall() == [
        ("j1", "first"),
        ("j2", "second"),
    ]
    assert verify_store(Store(store_dir)).ok


def test_a_job_two_files_describe_has_one_account_in_the_views(tmp_path: Path, store_dir: Path) -> None:
    from phaseline.verify import verify_store

    store = Store(store_dir)
    a = write(tmp_path / "a.toy", "j1,first", "j2,second")
    b = write(tmp_path / "b.toy", "j2,again", "j3,third")
    pipeline.ingest_paths([a, b], store)
    con = store.connect()
    # j2 is one job: equal formats and rows, so the first path's account is kept
    assert con.execute("SELECT job_id, name FROM jobs ORDER BY job_id").fetchall() == [
        ("j1", "first"),
        ("j2", "second"),
        ("j3", "third"),
    ]
    assert con.execute("SELECT count(*) FROM raw.jobs").fetchone() == (4,)
    assert con.execute("SELECT count(*) FROM events").fetchone() == (4,)  # raw records are never merged
    report = verify_store(store)
    assert report.ok
    assert [(f.check, f.subject) for f in report.findings] == [("overlaps", "j2")]
    assert f"take its rows from {a.resolve()}" in report.findings[0].detail
    # the sources row names each source's jobs, so overlaps are found without reading the data
    assert sorted(map(tuple, store.sources().column("job_ids").to_pylist())) == [("j1", "j2"), ("j2", "j3")]
    # a store written before sources.job_ids existed: every job's rows are counted instead
    sources_file = store_dir / str(store.manifest().sources_file)
    pq.write_table(pq.read_table(sources_file).drop_columns(["job_ids"]), sources_file)
    con = store.connect()
    assert con.execute("SELECT job_id, name FROM jobs ORDER BY job_id").fetchall() == [
        ("j1", "first"),
        ("j2", "second"),
        ("j3", "third"),
    ]
