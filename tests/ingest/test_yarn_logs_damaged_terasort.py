"""TeraSort's real `yarn logs` output damaged: a foreign container, a bad header, a cut, huge numbers."""

from __future__ import annotations

import re
from pathlib import Path

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from tests.ingest.yarn_logs_helpers import FOLDER, TERASORT, _raw, _rows_and_ctx


def _terasort_lines(fixtures_dir: Path) -> list[str]:
    return _raw(fixtures_dir, TERASORT).split("\n")


def test_a_container_of_another_application_is_skipped_and_named(fixtures_dir: Path, tmp_path: Path) -> None:
    # One digit of one container header flipped (_0002_ -> _0003_) in TeraSort's real output: that
    # container's files are skipped and named; every other container's rows land as before.
    lines = _terasort_lines(fixtures_dir)
    headers = [i for i, ln in enumerate(lines) if ln.startswith("Container: ")]
    at = headers[len(headers) // 2]
    victim = lines[at].split()[1]
    lines[at] = lines[at].replace("_0002_", "_0003_", 1)
    path = tmp_path / "app.txt"
    path.write_text("\n".join(lines))
    rows, ctx = _rows_and_ctx(path)
    (error,) = ctx.skipped
    assert error.line == at + 1
    assert "is of another application" in error.message
    pristine, _ = _rows_and_ctx(fixtures_dir / FOLDER / TERASORT)
    kept = {r.values.get("container_id") for r in rows if r.table == "attempts"}
    assert victim not in kept
    assert len(kept) == len({r.values.get("container_id") for r in pristine if r.table == "attempts"}) - 1
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert f"1 unreadable record skipped (line {at + 1})" in (result.error or "")


def test_a_damaged_logcontents_line_is_named_and_its_file_still_read(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    lines = _terasort_lines(fixtures_dir)
    at = next(i for i in range(len(lines) // 2, len(lines))
              if lines[i] == "LogContents:" and lines[i - 3] == "LogType:syslog")  # fmt: skip
    lines[at] = "LogCont?nts:"
    path = tmp_path / "app.txt"
    path.write_text("\n".join(lines))
    rows, ctx = _rows_and_ctx(path)
    (error,) = ctx.skipped
    assert (error.line, error.message.split(" 'Log")[0]) == (at + 1, "a damaged")
    pristine, _ = _rows_and_ctx(fixtures_dir / FOLDER / TERASORT)
    assert [r for r in rows if r.table != "events"] == [r for r in pristine if r.table != "events"]


def test_plain_output_cut_short_lands_as_partial(fixtures_dir: Path, tmp_path: Path) -> None:
    lines = _terasort_lines(fixtures_dir)
    path = tmp_path / "app.txt"
    path.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    rows, ctx = _rows_and_ctx(path)
    assert ctx.cut is not None
    assert "ends after" in ctx.cut.message
    assert [r for r in rows if r.table == "attempts"]
    assert ingest_paths([path], Store(tmp_path / "store")).results[0].status == "partial"


def test_numbers_no_column_holds_leave_their_field_unknown(fixtures_dir: Path, tmp_path: Path) -> None:
    # A split count past 64 bits failed the jobs table's write; a LogLength of 5,000 digits raised a
    # ValueError out of the reader.  Both lost the file; now the value is unknown and the rest lands.
    text = _raw(fixtures_dir, TERASORT)
    damaged = re.sub(r"Number of splits = \d+", "Number of splits = " + "9" * 25, text, count=1)
    damaged = re.sub(r"LogLength:\d+", "LogLength:" + "8" * 5000, damaged, count=1)
    assert damaged.count("9" * 25) == 1
    assert damaged.count("8" * 5000) == 1
    path = tmp_path / "app.txt"
    path.write_text(damaged)
    rows, _ = _rows_and_ctx(path)
    (job,) = [r.values for r in rows if r.table == "jobs"]
    assert job["total_maps"] is None
    assert ingest_paths([path], Store(tmp_path / "store")).results[0].status == "landed"
