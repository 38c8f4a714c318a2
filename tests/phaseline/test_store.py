"""The store and the ingest pipeline, with a toy reader so the mechanics are tested alone: what a file's ingest lands.

The toy format is in tests/phaseline/store_doubles.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import ingest.pipeline as pipeline
from ingest import formats, plan
from phaseline.store import Store
from tests.phaseline.store_doubles import (
    TOY,
    _toy_format,  # noqa: F401 - autouse: every test here reads the toy format
    detect_among,
    job_ids,
    write,
)


def test_ingest_lands_rows_and_sources(tmp_path: Path, store_dir: Path) -> None:
    a = write(tmp_path / "a.toy", "j1,first", "j2,second")
    summary = pipeline.ingest_paths([a], Store(store_dir))
    assert [r.status for r in summary.results] == ["landed"]
    assert summary.results[0].rows == {"jobs": 2, "events": 2}
    assert job_ids(Store(store_dir)) == ["j1", "j2"]
    src = (
        Store(store_dir)
        .connect()
        .execute("SELECT status, events_read, rows_written, format FROM sources")
        .fetchall()
    )
    assert src == [("landed", 2, 4, "toy")]


def test_same_file_twice_changes_nothing(tmp_path: Path, store_dir: Path) -> None:
    a = write(tmp_path / "a.toy", "j1,first")
    store = Store(store_dir)
    pipeline.ingest_paths([a], store)
    before = store.manifest()
    summary = pipeline.ingest_paths([a], store)
    assert [r.status for r in summary.results] == ["unchanged"]
    assert store.manifest() == before


def test_bad_file_is_quarantined_and_others_land(tmp_path: Path, store_dir: Path) -> None:
    good = write(tmp_path / "good.toy", "j1,ok")
    bad = write(tmp_path / "bad.toy", "j2,fine", "BAD", "j3,after")
    summary = pipeline.ingest_paths([bad, good], Store(store_dir))
    status = {Path(r.path).name: r for r in summary.results}
    assert status["good.toy"].status == "landed"
    assert status["bad.toy"].status == "quarantined"
    assert "bad.toy:3" in (status["bad.toy"].error or "")
    assert status["bad.toy"].rows_quarantined == 2  # the jobs + events row of j2
    assert job_ids(Store(store_dir)) == ["j1"]
    err = (
        Store(store_dir).connect().execute("SELECT error FROM sources WHERE status='quarantined'").fetchone()
    )
    assert err is not None
    assert "toy record is BAD" in err[0]


def test_truncated_file_keeps_rows_before_the_cut(tmp_path: Path, store_dir: Path) -> None:
    cut = write(tmp_path / "cut.toy", "j1,ok", "CUT")
    summary = pipeline.ingest_paths([cut], Store(store_dir))
    assert summary.results[0].status == "partial"
    assert job_ids(Store(store_dir)) == ["j1"]
    err = Store(store_dir).connect().execute("SELECT error FROM sources").fetchone()
    assert err is not None
    assert "cut.toy:3" in err[0]


def test_unknown_format_is_skipped(tmp_path: Path, store_dir: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    summary = pipeline.ingest_paths([tmp_path], Store(store_dir))
    assert [r.status for r in summary.results] == ["skipped"]


def test_schema_mistake_in_reader_quarantines_with_message(tmp_path: Path, store_dir: Path) -> None:
    typo = write(tmp_path / "typo.toy", "TYPO")
    summary = pipeline.ingest_paths([typo], Store(store_dir))
    assert summary.results[0].status == "quarantined"
    assert "nmae" in (summary.results[0].error or "")


def test_identical_copy_is_recorded_not_duplicated(tmp_path: Path, store_dir: Path) -> None:
    a = write(tmp_path / "a.toy", "j1,first")
    (tmp_path / "sub").mkdir()
    b = write(tmp_path / "sub" / "copy.toy", "j1,first")
    summary = pipeline.ingest_paths([a, b], Store(store_dir))
    assert [r.status for r in summary.results] == ["landed", "skipped"]
    assert job_ids(Store(store_dir)) == ["j1"]


def test_verify_names_a_copy_that_an_older_store_let_land(
    tmp_path: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a store written before ingest skipped copies holds both: their rows share one source_sha256,
    # so the views count them twice, and verify had called the store consistent
    from phaseline.verify import verify_store

    a = write(tmp_path / "a.toy", "j1,first")
    b = write(tmp_path / "b.toy", "j1,first")
    monkeypatch.setattr(plan.Copies, "twin", lambda self, key, sha256, member: None)  # the old ingest
    summary = pipeline.ingest_paths([a, b], Store(store_dir))
    assert [r.status for r in summary.results] == ["landed", "landed"]
    report = verify_store(Store(store_dir))
    assert not report.ok
    (finding,) = report.findings
    assert (finding.check, finding.subject) == ("copies", str(b))
    assert f"same bytes as {a}" in finding.detail


def test_glob_and_directory_walk_skip_hidden(tmp_path: Path, store_dir: Path) -> None:
    write(tmp_path / "a.toy", "j1,x")
    write(tmp_path / ".hidden.toy", "j2,x")
    (tmp_path / "d").mkdir()
    write(tmp_path / "d" / "b.toy", "j3,x")
    assert sorted(p.name for p in pipeline.iter_files([tmp_path])) == ["a.toy", "b.toy"]
    assert [p.name for p in pipeline.iter_files([str(tmp_path / "*.toy")])] == ["a.toy"]


def test_identical_bytes_named_for_different_jobs_are_two_sources(
    tmp_path: Path, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A reader that may take the job id from the file name when the content lacks one (conf XML):
    # byte-identical files named for different jobs both land.
    monkeypatch.setattr(formats, "detect", detect_among(dataclasses.replace(TOY, job_from_name=True)))
    a = write(tmp_path / "job_1526555215992_0001_conf.toy", "?,first")
    b = write(tmp_path / "job_1526555215992_0002_conf.toy", "?,first")
    summary = pipeline.ingest_paths([a, b], Store(store_dir))
    assert [r.status for r in summary.results] == ["landed", "landed"]
    # ...and re-ingesting the second one alone changes nothing
    assert [r.status for r in pipeline.ingest_paths([b], Store(store_dir)).results] == ["unchanged"]
    assert verify_store_ok(store_dir)


def test_identical_bytes_of_a_format_that_names_its_job_are_one_source_whatever_their_names(
    tmp_path: Path, store_dir: Path
) -> None:
    # The toy's job id is in its content (as a .jhist's is): a copy named for a job, or for none,
    # is the same source.  A .jhist copied to "teragen.jhist" had landed a second time, every row
    # twice, and the job's profile failed on its repeated attempt ids.
    a = write(tmp_path / "job_1526555215992_0001.toy", "j1,first")
    b = write(tmp_path / "copy.toy", "j1,first")
    c = write(tmp_path / "job_1526555215992_0009.toy", "j1,first")
    summary = pipeline.ingest_paths([a, b, c], Store(store_dir))
    assert [r.status for r in summary.results] == ["landed", "skipped", "skipped"]
    assert all(f"same content as {a}" in (r.error or "") for r in summary.results[1:])
    # ...and so is a copy ingested later, against the store's sources
    d = write(tmp_path / "later.toy", "j1,first")
    later = pipeline.ingest_paths([d], Store(store_dir)).results
    assert [r.status for r in later] == ["skipped"]
    assert "already in the store" in (later[0].error or "")
    assert job_ids(Store(store_dir)) == ["j1"]


def verify_store_ok(store_dir: Path) -> bool:
    from phaseline.verify import verify_store

    return verify_store(Store(store_dir)).ok
