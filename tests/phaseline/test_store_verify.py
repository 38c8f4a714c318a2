"""A tampered, damaged or missing store: verify's findings and the CLI's clean errors."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

import ingest.pipeline as pipeline
from phaseline.errors import StoreError
from phaseline.store import Store
from tests.phaseline.store_doubles import (
    _toy_format,  # noqa: F401 - autouse: every test here reads the toy format
    write,
)


def test_verify_passes_on_a_consistent_store_and_catches_tampering(tmp_path: Path, store_dir: Path) -> None:
    from phaseline.verify import verify_store

    store = Store(store_dir)
    pipeline.ingest_paths(
        [write(tmp_path / "a.toy", "j1,x", "j2,y"), write(tmp_path / "b.toy", "BAD")], store
    )
    report = verify_store(store)
    assert report.ok, report.findings
    assert report.sources_checked == 2
    # an orphan left by a crash is a warning, not an error
    orphan = store_dir / "data" / "x" / "jobs" / "orphan.parquet"
    orphan.parent.mkdir(parents=True)
    pq.write_table(pq.read_table(store_dir / store.manifest().files[0].path), orphan)
    report = verify_store(store)
    assert report.ok
    assert [f.check for f in report.findings] == ["orphans"]
    # a missing data file is an error naming it
    missing = store.manifest().files[0].path
    (store_dir / missing).unlink()
    report = verify_store(store)
    assert not report.ok
    assert any(f.subject == missing and f.check == "manifest" for f in report.findings)


@pytest.mark.parametrize(
    "command",
    [
        ["compact"],
        ["jobs"],
        ["tables"],
        ["verify"],
        ["query", "SELECT 1"],
        ["phases", "job_1_0001"],
        ["profile", "job_1_0001", "--out", "p.json"],
        ["dataflow", "job_1_0001"],
        ["backtest", "--platform", __file__],
    ],
)
@pytest.mark.parametrize("where", ["missing", "not-a-store"])
def test_reading_a_missing_store_says_so_and_creates_nothing(
    tmp_path: Path, command: list[str], where: str
) -> None:
    # A mistyped --store (or a directory that is not a store) must not read as an empty store.
    from click.testing import CliRunner

    from phaseline.cli import main

    store = tmp_path / where
    if where == "not-a-store":
        store.mkdir()
    result = CliRunner().invoke(main, [*command, "--store", str(store)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"no store at {store}: it " in result.stderr
    assert store.exists() == (where == "not-a-store")
    assert not store.exists() or not any(store.iterdir())


def test_damaged_store_files_give_findings_and_clean_errors(tmp_path: Path, store_dir: Path) -> None:
    from click.testing import CliRunner

    from phaseline.cli import main
    from phaseline.verify import verify_store

    store = Store(store_dir)
    pipeline.ingest_paths([write(tmp_path / "a.toy", "j1,first")], store)
    data = next(f for f in store.manifest().files if f.table == "jobs")
    (store_dir / data.path).write_bytes(b"PAR1 not parquet")
    result = CliRunner().invoke(main, ["jobs", "--store", str(store_dir)])
    assert result.exit_code == 1, result.output
    assert "see `phaseline verify`" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)

    sources_file = store_dir / str(store.manifest().sources_file)
    sources_file.write_bytes(b"")
    with pytest.raises(StoreError, match="sources table cannot be read"):
        store.sources()
    report = verify_store(store)  # reports, does not raise
    assert not report.ok
    checks = {(f.check, f.subject) for f in report.findings}
    assert ("sources", str(store.manifest().sources_file)) in checks
    assert ("schema", data.path) in checks  # the file checks still ran
