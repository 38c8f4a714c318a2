"""The .jhist reader on copies cut short: the rows before the cut land and the file is partial."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from oracle_util import phaseline_rows

from ingest.base import ReadContext
from ingest.jhist import read_jhist
from phaseline.errors import TraceTruncatedError
from tests.ingest.jhist_helpers import _fixture, _raw_events


@pytest.mark.parametrize("where", [0.3, 0.6, 0.97])
def test_truncated_copy_keeps_rows_before_the_cut(jhists: list[Path], tmp_path: Path, where: float) -> None:
    src = _fixture(jhists, "mapreduce-client-jobclient")
    data = src.read_bytes()
    raw = _raw_events(data)
    cut_line, cut_offset, _ = raw[int(len(raw) * where)]
    line_len = data.index(b"\n", cut_offset) - cut_offset
    copy = tmp_path / "cut.jhist"
    copy.write_bytes(data[: cut_offset + line_len // 2])  # the writer died mid-event
    complete = [(n, e) for n, _, e in raw if n < cut_line]

    tables, cut, ctx = phaseline_rows(copy)
    assert cut is not None
    assert (cut.line, cut.offset) == (cut_line, cut_offset)
    assert str(copy) in str(cut)
    assert [r["seq"] for r in tables["events"]] == [n for n, _ in complete]
    assert ctx.events_read == len(complete)
    # The job, tasks and attempts seen before the cut still land.
    assert len(tables["jobs"]) == 1
    started = {next(iter(e["event"].values()))["taskid"] for _, e in complete if e["type"] == "TASK_STARTED"}
    assert {t["task_id"] for t in tables["tasks"]} == started


def test_cut_at_a_line_end_is_truncated_too(jhists: list[Path], tmp_path: Path) -> None:
    src = _fixture(jhists, "mapreduce-client-jobclient")
    lines = src.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "no-end.jhist"
    copy.write_bytes(b"".join(lines[: len(lines) // 2]))
    with pytest.raises(TraceTruncatedError, match="ends before JOB_FINISHED"):
        list(read_jhist(copy, ReadContext(copy)))


def test_gzip_cut_short_is_truncated(jhists: list[Path], tmp_path: Path) -> None:
    src = _fixture(jhists, "mapreduce-client-jobclient")
    packed = gzip.compress(src.read_bytes())
    copy = tmp_path / "cut.jhist.gz"
    copy.write_bytes(packed[: len(packed) * 2 // 3])
    tables, cut, ctx = phaseline_rows(copy)
    assert cut is not None
    assert "compressed stream ends early" in str(cut)
    assert 0 < ctx.events_read == len(tables["events"])
    assert len(tables["jobs"]) == 1


def test_pipeline_lands_jhists_and_records_a_cut(jhists: list[Path], tmp_path: Path) -> None:
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    src = _fixture(jhists, "job_1526555215992_0002")
    data = src.read_bytes()
    last = data.rstrip().rfind(b"\n")
    cut = tmp_path / "cut.jhist"
    cut.write_bytes(data[: last + 40])  # the writer died inside the last event
    store = Store(tmp_path / "store")
    summary = ingest_paths([src, cut], store)
    status = {Path(r.path).name: r for r in summary.results}
    assert status[src.name].status == "landed"
    assert status["cut.jhist"].status == "partial"
    # sources.error names the file, the cut line and its byte offset.
    assert re.search(
        r"cut\.jhist:\d+ \(byte \d+\): the last event is cut short", status["cut.jhist"].error or ""
    )
    con = store.connect()
    jobs = con.execute(
        "SELECT job_id, status, finish_ms FROM raw.jobs ORDER BY finish_ms NULLS LAST"
    ).fetchall()
    assert jobs == [
        ("job_1526555215992_0002", "SUCCEEDED", 1526555709175),
        ("job_1526555215992_0002", None, None),
    ]
    # one job, so the views hold one account of it: the complete file's
    assert con.execute("SELECT job_id, status FROM jobs").fetchall() == [
        ("job_1526555215992_0002", "SUCCEEDED")
    ]
    found = con.execute(
        "SELECT count(*) FROM events WHERE source_sha256 = ?", [status[src.name].sha256]
    ).fetchone()
    assert found is not None
    (n_events,) = found
    assert n_events == status[src.name].events_read == len(_raw_events(data))


def test_a_second_history_in_one_file_is_not_read_into_the_first(jhists: list[Path], tmp_path: Path) -> None:
    # Two histories concatenated: the second's events had been applied to the first job (its
    # times, tasks and counters); the first is read, and the file lands partial at the second header
    a, b = _fixture(jhists, "job_1526555215992_0001"), _fixture(jhists, "job_1526555215992_0002")
    both = tmp_path / "both.jhist"
    first = a.read_bytes()
    both.write_bytes(first + b.read_bytes())
    tables, cut, _ = phaseline_rows(both)
    alone, _, _ = phaseline_rows(a)
    assert cut is not None
    assert "another history begins here" in cut.message
    assert cut.line == first.count(b"\n") + 1
    for table in ("jobs", "tasks", "attempts", "counters"):
        assert tables[table] == alone[table], table
