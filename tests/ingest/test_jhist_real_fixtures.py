"""The .jhist reader on the real fixtures: every event, their done names, failed jobs, detection."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote_plus

import pytest
from oracle_util import phaseline_rows

from ingest.base import ReadContext
from ingest.jhist import read_jhist, sniff_jhist
from phaseline.errors import TraceParseError, TraceTruncatedError
from tests.ingest.jhist_helpers import _fixture, _raw_events

# job_<cluster>_<n>-<submit>-<user>-<name>-<finish>-<maps>-<reduces>-<status>-<queue>[-<launch>].jhist
DONE_NAME = re.compile(
    r"^(?P<job>job_\d+_\d+)-(?P<submit>\d+)-(?P<user>[^-]+)-(?P<name>[^-]+)-(?P<finish>\d+)-"
    r"(?P<maps>-?\d+)-(?P<reduces>-?\d+)-(?P<status>[A-Z]+)-(?P<queue>[^-]+?)(?:-(?P<launch>\d+))?\.jhist$"
)


def test_every_fixture_reads_whole(jhists: list[Path]) -> None:
    for path in jhists:
        data = path.read_bytes()
        tables, cut, ctx = phaseline_rows(path)
        assert cut is None, f"{path.name}: {cut}"
        raw = _raw_events(data)
        assert ctx.events_read == len(raw) == len(tables["events"])
        assert not ctx.unknown
        # Every event line lands, in order, with its raw JSON and its own line number.
        for (line_no, _, event), row in zip(raw, tables["events"], strict=True):
            assert row["seq"] == line_no
            assert row["event_type"] == event["type"]
            assert json.loads(row["payload_json"]) == event
        (job,) = tables["jobs"]
        assert {r["job_id"] for rows in tables.values() for r in rows} == {job["job_id"]}
        submitted = next(e for _, _, e in raw if e["type"] == "JOB_SUBMITTED")
        assert job["job_id"] == next(iter(submitted["event"].values()))["jobid"]
        # Every started attempt is a row, and belongs to a task row.
        started = {
            next(iter(e["event"].values()))["attemptId"]
            for _, _, e in raw
            if e["type"].endswith("ATTEMPT_STARTED")
        }
        assert {a["attempt_id"] for a in tables["attempts"]} == started
        assert {a["task_id"] for a in tables["attempts"]} <= {t["task_id"] for t in tables["tasks"]}


def test_history_server_file_names_agree(jhists: list[Path]) -> None:
    named = [(p, m) for p in jhists if (m := DONE_NAME.match(p.name))]
    assert len(named) >= 6
    for path, m in named:
        tables, _, _ = phaseline_rows(path)
        (job,) = tables["jobs"]
        assert job["job_id"] == m["job"]
        assert job["submit_ms"] == int(m["submit"])
        assert job["finish_ms"] == int(m["finish"])
        assert job["user"] == m["user"]
        assert job["name"] == unquote_plus(m["name"])
        assert job["status"] == m["status"]
        assert job["queue"] == m["queue"]
        if m["launch"]:
            assert job["launch_ms"] == int(m["launch"])
        # The name's map/reduce counts are the tasks that succeeded.
        done = Counter(t["task_type"] for t in tables["tasks"] if t["status"] == "SUCCEEDED")
        assert job["finished_maps"] == int(m["maps"])
        assert job["finished_reduces"] == int(m["reduces"])
        if "derived-hand-edited" in str(path):
            # Upstream added a second reduce task by hand; JOB_INITED/JOB_FINISHED still say 1.
            assert (done["MAP"], done["REDUCE"]) == (10, 2)
            assert job["total_reduces"] == 1
        else:
            assert (done["MAP"], done["REDUCE"]) == (int(m["maps"]), int(m["reduces"]))
        # Each successful task names an attempt that succeeded on it.
        attempts = {a["attempt_id"]: a for a in tables["attempts"]}
        for task in tables["tasks"]:
            if task["successful_attempt_id"] is not None:
                winner = attempts[task["successful_attempt_id"]]
                assert winner["status"] == "SUCCEEDED"
                assert winner["task_id"] == task["task_id"]


def test_failed_jobs(jhists: list[Path]) -> None:
    failed = [p for p in jhists if "FAILED" in p.name]
    assert len(failed) == 4
    for path in failed:
        tables, cut, _ = phaseline_rows(path)
        assert cut is None
        (job,) = tables["jobs"]
        assert job["status"] == "FAILED"
        statuses = Counter(a["status"] for a in tables["attempts"])
        assert statuses["FAILED"] >= 1
        for a in tables["attempts"]:
            assert a["host"]
            assert ":" not in a["host"]
            assert "/" not in a["host"]
            assert a["finish_ms"] >= a["start_ms"]
            if a["status"] == "FAILED":  # FailJob's exception, or the Sleep job's timeout
                assert re.search(r"Intentional map failure|Timed out after \d+ secs", a["error"])
                assert a["map_finish_ms"] is None  # the file has no phase times for it
            if a["status"] == "KILLED":
                assert a["error"] is None
    # SOURCES.md: the 0.23.9 job has 7 FAILED + 1 KILLED attempts; its other tasks were killed.
    tables, _, _ = phaseline_rows(_fixture(jhists, "job_0.23.9-FAILED"))
    assert Counter(a["status"] for a in tables["attempts"]) == {"FAILED": 7, "KILLED": 1}
    assert Counter(t["status"] for t in tables["tasks"]) == {"FAILED": 1, "KILLED": 2}
    # 2.x writers add the job's diagnostics, and counters to TASK_FAILED: empty for these
    # failed and killed tasks, so no task-scope counter rows.
    path = _fixture(jhists, "job_2.4.0-FAILED")
    tables, _, _ = phaseline_rows(path)
    assert tables["jobs"][0]["diagnostics"].startswith("Task failed task_")
    task_failed = [e for _, _, e in _raw_events(path.read_bytes()) if e["type"] == "TASK_FAILED"]
    assert len(task_failed) == 3
    assert all(next(iter(e["event"].values()))["counters"]["groups"] == [] for e in task_failed)
    assert {t["status"] for t in tables["tasks"]} == {"FAILED", "KILLED"}
    assert not [c for c in tables["counters"] if c["scope"] == "task"]


def test_dr_elephant_jhists(jhists: list[Path]) -> None:
    paths = [p for p in jhists if "linkedin-dr-elephant" in str(p)]
    assert len(paths) == 3
    for path in paths:
        tables, cut, _ = phaseline_rows(path)
        assert cut is None
        by_scope = Counter(c["scope"] for c in tables["counters"])
        assert by_scope["job_total"] > 0
        assert by_scope["job_map"] > 0
        assert by_scope["job_reduce"] > 0
        # Union-wrapped fields are unwrapped: successfulAttemptId, locality.
        for task in tables["tasks"]:
            assert task["status"] == "SUCCEEDED"
            assert task["successful_attempt_id"].startswith("attempt_")
        assert {a["locality"] for a in tables["attempts"] if a["task_type"] == "MAP"} <= {
            "NODE_LOCAL",
            "RACK_LOCAL",
            "OFF_SWITCH",
        }
        # A 2.7 task's counters are those of its successful attempt.
        for task in tables["tasks"]:
            mine = {
                (c["group_name"], c["counter_name"], c["value"])
                for c in tables["counters"]
                if c["scope"] == "task" and c["task_id"] == task["task_id"]
            }
            winner = {
                (c["group_name"], c["counter_name"], c["value"])
                for c in tables["counters"]
                if c["attempt_id"] == task["successful_attempt_id"]
            }
            assert mine
            assert mine == winner
        # Reduce attempts carry the shuffle and sort ends, in order.
        for a in tables["attempts"]:
            if a["task_type"] == "REDUCE":
                assert a["start_ms"] <= a["shuffle_finish_ms"] <= a["sort_finish_ms"] <= a["finish_ms"]
            else:
                assert a["start_ms"] <= a["map_finish_ms"] <= a["finish_ms"]


def test_sniff(jhists: list[Path], fixtures_dir: Path) -> None:
    for path in jhists:
        assert sniff_jhist(path.read_bytes()[:8192], path)
    others = [
        p for p in fixtures_dir.rglob("*") if p.is_file() and p.suffix in (".json", ".xml", ".csv", ".log")
    ]
    assert others
    for path in others:
        assert not sniff_jhist(path.read_bytes()[:8192], path), path


def test_not_a_jhist_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jhist"
    path.write_bytes(b"Avro-Xml\n{}\n")
    with pytest.raises(TraceParseError, match="Avro-Json"):
        list(read_jhist(path, ReadContext(path)))
    path.write_bytes(b"Avro-Binary\n{}\n")  # the binary flavour (ingest.jhist_binary) with no usable schema
    with pytest.raises(TraceParseError, match="no Avro schema"):
        list(read_jhist(path, ReadContext(path)))
    path.write_bytes(b"")
    with pytest.raises(TraceTruncatedError):
        list(read_jhist(path, ReadContext(path)))


def test_detected_as_jhist(jhists: list[Path]) -> None:
    from ingest.formats import detect

    for path in jhists:
        fmt = detect(path)
        assert fmt is not None
        assert fmt.name == "jhist", path


def test_the_ingest_command_prints_one_unwrapped_line_per_file(jhists: list[Path], tmp_path: Path) -> None:
    # Scripts grep these lines: each file's status, path, counts and rows stay on one line
    # whatever the length (rich, which draws the bar on a terminal, wrapped them at 80 columns).
    from click.testing import CliRunner

    from phaseline.cli import main

    deep = tmp_path / ("a-rather-long-directory-name-" * 3) / jhists[0].name
    deep.parent.mkdir(parents=True)
    deep.write_bytes(jhists[0].read_bytes())
    res = CliRunner().invoke(main, ["ingest", str(deep), "--store", str(tmp_path / "store")])
    assert res.exit_code == 0, res.output
    (landed,) = [ln for ln in res.stderr.splitlines() if ln.startswith("landed")]
    assert str(deep) in landed
    assert re.search(
        r"\[jhist\] events=\d+ rows=\d+ \(attempts=\d+, counters=\d+, events=\d+, jobs=1", landed
    )
    assert len(landed) > 120
