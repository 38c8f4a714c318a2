"""TeraSort's real reduce container cut out of `yarn logs`: read as a directory, listed, and damaged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from reader_checks import table

from ingest.base import Row
from ingest.formats import detect
from ingest.pipeline import ingest_paths
from phaseline.errors import TraceParseError
from phaseline.store import Store
from tests.ingest.tasklog_helpers import _container_files, _read

REDUCE_CONTAINER = "container_1756057717712_0002_01_000032"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "2025-13-45 17:58:22,408 INFO [main] org.apache.hadoop.mapred.MapTask: Finished spill 0",
            "malformed timestamp",
        ),
        ("2025-08-24 17:58:22,408 Finished spill 0", "malformed log line"),
        (
            "2025-08-24 17:58:22 INFO [main] org.apache.hadoop.mapred.MapTask: Finished spill 0",
            "malformed log line",
        ),
    ],
)
def test_a_malformed_line_is_skipped_and_named(
    fixtures_dir: Path, tmp_path: Path, line: str, message: str
) -> None:
    # A real reduce container's syslog (TeraSort on YARN) with one bad line, and a continuation of it, in the
    # middle: every other line gives the rows it gives without them, and the bad line is named.
    lines = _container_files(fixtures_dir, REDUCE_CONTAINER)["syslog"].splitlines()
    at = next(i for i in range(len(lines) // 2, 0, -1) if lines[i][:4].isdigit())  # a record's first line
    pristine_dir, bad_dir = tmp_path / "pristine" / REDUCE_CONTAINER, tmp_path / "bad" / REDUCE_CONTAINER
    for where, text in (
        (pristine_dir, lines),
        (bad_dir, [*lines[:at], line, "\tat its continuation", *lines[at:]]),
    ):
        where.mkdir(parents=True)
        (where / "syslog").write_text("\n".join(text) + "\n")
    pristine, pristine_ctx = _read(pristine_dir / "syslog")
    rows, ctx = _read(bad_dir / "syslog")
    (error,) = ctx.skipped
    assert isinstance(error, TraceParseError)
    assert message in error.message
    assert (error.line, error.path) == (at + 1, str(bad_dir / "syslog"))
    assert ctx.events_read == pristine_ctx.events_read
    assert ctx.unknown == pristine_ctx.unknown  # the continuation went with its record, not to orphan lines

    def shifted(r: Row) -> tuple[str, dict[str, object]]:
        values = dict(r.values)
        if r.table == "attempt_events" and values["line_no"] > at:
            values["line_no"] -= 2
        return r.table, values

    assert [shifted(r) for r in rows] == [(r.table, r.values) for r in pristine]
    result = ingest_paths([bad_dir / "syslog"], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert f"1 unreadable record skipped (line {at + 1})" in (result.error or "")
    assert result.rows == ingest_paths([pristine_dir / "syslog"], Store(tmp_path / "store0")).results[0].rows


def test_a_container_directory_reads_syslog_with_its_shuffle_log(fixtures_dir: Path, tmp_path: Path) -> None:
    files = _container_files(fixtures_dir, REDUCE_CONTAINER)
    where = tmp_path / "application_1756057717712_0002" / REDUCE_CONTAINER
    where.mkdir(parents=True)
    for name in ("syslog", "syslog.shuffle"):
        (where / name).write_text(files[name])
    part = detect(where / "syslog.shuffle")
    assert part is not None
    assert not part.landed
    fmt = detect(where / "syslog")
    assert fmt is not None
    assert fmt.name == "hadoop-task-log"
    rows, _ = _read(where / "syslog")
    (attempt,) = table(rows, "attempts")
    assert attempt["attempt_id"] == "attempt_1756057717712_0002_r_000000_0"
    assert attempt["container_id"] == REDUCE_CONTAINER
    kinds = [e["kind"] for e in table(rows, "attempt_events")]
    assert kinds.count("fetch_start") == 76
    assert kinds.count("inmem_merge_done") == 15
    assert kinds.count("final_merge") == 1
    main = [p["phase"] for p in table(rows, "attempt_phases") if p["lane"] == "main"]
    assert main == ["setup", "wait", "shuffle", "sort", "reduce+write", "commit", "other"]


def test_a_job_known_only_from_a_task_log_is_listed_by_jobs(fixtures_dir: Path, tmp_path: Path) -> None:
    # `analyze`, `phases` and `report` know such a job (from its attempts); `phaseline jobs`, which
    # the "not in the store" errors point to, read only the jobs table and listed nothing.
    from click.testing import CliRunner

    from phaseline.cli import main

    files = _container_files(fixtures_dir, REDUCE_CONTAINER)
    (tmp_path / "syslog").write_text(files["syslog"])
    store = str(tmp_path / "s")
    assert CliRunner().invoke(main, ["ingest", str(tmp_path / "syslog"), "--store", store]).exit_code == 0
    res = CliRunner().invoke(main, ["jobs", "--store", store, "--format", "json"])
    assert res.exit_code == 0, res.output
    (job,) = json.loads(res.stdout)
    assert job["job_id"] == "job_1756057717712_0002"
    assert job["source_format"] == "hadoop-task-log"
    assert job["status"] is None  # no history: nothing the job record would say is made up


def test_numbers_no_column_holds_in_a_shuffle_log_cost_only_their_line(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    # TeraSort's real reduce container: a merge line's byte count of 5,000 digits (int() refuses it: a
    # ValueError had escaped the reader) is skipped and named; a fetch 'len' of 5,000 digits (kept as text
    # in the line's fields) and fetches whose lens sum past 64 bits leave the shuffle's size unknown.
    files = _container_files(fixtures_dir, REDUCE_CONTAINER)
    shuffle = files["syslog.shuffle"].splitlines()
    at = next(i for i, ln in enumerate(shuffle) if re.search(r"Merging \d+ files, \d+ bytes from disk", ln))
    shuffle[at] = re.sub(r"files, \d+ bytes", "files, " + "7" * 5000 + " bytes", shuffle[at])
    fetches = [i for i, ln in enumerate(shuffle) if "about to shuffle output" in ln]
    shuffle[fetches[0]] = re.sub(r"len: \d+", "len: " + "9" * 5000, shuffle[fetches[0]])
    for i in fetches[1:3]:
        shuffle[i] = re.sub(r"len: \d+", f"len: {2**63 - 1}", shuffle[i])
    syslog = files["syslog"].splitlines()
    where = tmp_path / REDUCE_CONTAINER
    where.mkdir()
    (where / "syslog").write_text("\n".join(syslog) + "\n")
    (where / "syslog.shuffle").write_text("\n".join(shuffle) + "\n")
    (result,) = ingest_paths([where / "syslog"], Store(tmp_path / "s")).results
    assert result.status == "partial"
    assert f"1 unreadable record skipped (line {at + 1})" in (result.error or "")
    assert "a number in the line cannot be read: Exceeds the limit (4300 digits)" in (result.error or "")
