"""Ingest from where history lives: a history server's done/ tree by date, a time window, a growing directory.

The tree is laid out as the JobHistory server writes it (``done/YYYY/MM/DD/<serial>/``,
the ``.jhist`` under its done-file name beside its ``_conf.xml``), with copies
of one real ``.jhist`` fixture with the job's id replaced (in its name and in
every id inside) and its done-file name given other finish times (the window
reads the names).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from ingest.history_dirs import TimeWindow, WindowError, history_files
from ingest.pipeline import ingest_paths
from phaseline.cli import main
from phaseline.store import Store
from tests.conftest import FIXTURES

SEED = next(FIXTURES.rglob("job_1526555215992_0001-*.jhist"))


def _ms(y: int, m: int, d: int, h: int = 12) -> int:
    return int(datetime(y, m, d, h, tzinfo=UTC).timestamp() * 1000)


def _job(done: Path, serial: str, n: int, finish_ms: int) -> Path:
    day = datetime.fromtimestamp(finish_ms / 1000, UTC)
    where = done / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}" / serial
    where.mkdir(parents=True, exist_ok=True)
    job = f"job_1526555215992_{n:04d}"
    jhist = where / f"{job}-{finish_ms - 60_000}-user-word%2Dcount-{finish_ms}-2-1-SUCCEEDED-default-{finish_ms - 50_000}.jhist"
    jhist.write_bytes(SEED.read_bytes().replace(b"1526555215992_0001", f"1526555215992_{n:04d}".encode()))
    (where / f"{job}_conf.xml").write_text(
        f'<?xml version="1.0"?><configuration><property><name>mapreduce.job.name</name><value>{job}</value>'
        "</property></configuration>\n"
    )
    return jhist


@pytest.fixture
def done(tmp_path: Path) -> Path:
    root = tmp_path / "history" / "done"
    _job(root, "000000", 1, _ms(2026, 10, 31, 23))
    _job(root, "000000", 2, _ms(2026, 11, 1, 1))
    _job(root, "000000", 3, _ms(2026, 11, 2, 8))
    _job(root, "000001", 4, _ms(2026, 11, 2, 20))
    _job(root, "000000", 5, _ms(2026, 12, 5))
    _job(root, "000000", 6, _ms(2025, 11, 2))
    return root


def _jobs(files: list[Path]) -> list[str]:
    return [f.name.split("-", 1)[0].removesuffix("_conf.xml") + (".conf" if f.name.endswith(".xml") else "")
            for f in files]  # fmt: skip


def test_whole_tree_in_date_order(done: Path) -> None:
    files = list(history_files([done]))
    assert _jobs(files) == [f"job_1526555215992_000{n}{s}" for n in (6, 1, 2, 3, 4, 5) for s in ("", ".conf")]


def test_a_window_of_days_keeps_their_jobs_and_confs(done: Path) -> None:
    files = list(history_files([done], TimeWindow.parse("2026-11-01", "2026-11-02")))
    assert _jobs(files) == [f"job_1526555215992_000{n}{s}" for n in (2, 3, 4) for s in ("", ".conf")]


def test_a_window_to_the_hour_reads_the_finish_time_in_the_name(done: Path) -> None:
    files = list(history_files([done], TimeWindow.parse("2026-11-02T00:00", "2026-11-02T12:00")))
    assert _jobs(files) == ["job_1526555215992_0003", "job_1526555215992_0003.conf"]


def test_days_outside_the_window_are_not_entered(done: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entered: list[str] = []
    real_walk = os.walk

    def walk(top: str | os.PathLike[str], *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        for root, dirs, names in real_walk(top, *args, **kwargs):  # type: ignore[arg-type]
            entered.append(Path(root).relative_to(done).as_posix())
            yield root, dirs, names

    monkeypatch.setattr(os, "walk", walk)
    list(history_files([done], TimeWindow.parse("2026-12-01", None)))
    assert entered == [".", "2026", "2026/12", "2026/12/05", "2026/12/05/000000"]


def test_files_outside_a_dated_tree_go_by_their_time(tmp_path: Path) -> None:
    old, new = tmp_path / "old.log", tmp_path / "new.log"
    old.write_text("x\n")
    new.write_text("y\n")
    os.utime(old, (_ms(2020, 1, 1) / 1000,) * 2)
    assert list(history_files([tmp_path], TimeWindow.parse("2026-01-01", None))) == [new]
    assert list(history_files([old], TimeWindow.parse("2026-01-01", None))) == [old]  # named: always read


@pytest.mark.parametrize(
    ("since", "until", "message"),
    [("yesterday", None, "--since 'yesterday' is no date"), ("2026-11-02", "2026-11-01", "is not after")],
)
def test_a_bad_window_is_refused(since: str, until: str | None, message: str) -> None:
    with pytest.raises(WindowError, match=message):
        TimeWindow.parse(since, until)


def test_new_only_reads_only_what_the_store_lacks(done: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    first = ingest_paths([done], store, new_only=True)
    assert {r.status for r in first.results} == {"landed"}
    _job(done, "000000", 7, _ms(2026, 12, 6))
    again = ingest_paths([done], store, new_only=True)
    read = sorted(Path(r.path).name.split("-", 1)[0] for r in again.results if r.status != "unchanged")
    assert read == ["job_1526555215992_0007", "job_1526555215992_0007_conf.xml"]
    assert len(again.results) == len(first.results) + 2


def test_new_only_hashes_no_file_it_holds(done: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "store")
    ingest_paths([done], store)
    from ingest import plan

    hashed: list[Path] = []
    real = plan.sha256_file
    monkeypatch.setattr(plan, "sha256_file", lambda p: hashed.append(p) or real(p))
    summary = ingest_paths([done], store, new_only=True)
    assert hashed == []
    assert {r.status for r in summary.results} == {"unchanged"}


def test_cli_window_and_resume(done: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    store = tmp_path / "store"
    args = ["ingest", str(done), "--store", str(store), "--since", "2026-11-02", "--until", "2026-11-02"]
    out = runner.invoke(main, [*args, "--new-only"])
    assert out.exit_code == 0, out.output
    assert "4 files: 4 landed (0 partial), 0 unchanged" in out.output  # jobs 3 and 4, each with its conf
    again = runner.invoke(main, [*args, "--new-only"])
    assert again.exit_code == 0, again.output
    assert "4 files: 0 landed (0 partial), 4 unchanged" in again.output
    bad = runner.invoke(main, ["ingest", str(done), "--store", str(store), "--since", "soon"])
    assert bad.exit_code != 0
    assert "--since 'soon' is no date" in bad.output
