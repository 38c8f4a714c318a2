"""The .jhist reader on copies edited as a writer could have: the same rows, or those the edit calls for."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

from oracle_util import killed_attempt_line, phaseline_rows

from tests.ingest.jhist_helpers import _comparable, _fixture, _raw_events


def _job_0004(jhists: list[Path]) -> tuple[Path, list[str]]:
    """The fixture job_1526555215992_0004's file and its lines, line ends kept (what an edited copy is cut from)."""
    src = _fixture(jhists, "job_1526555215992_0004")
    return src, src.read_text(encoding="utf-8").splitlines(keepends=True)


def test_layout_and_encoding_do_not_change_rows(jhists: list[Path], tmp_path: Path) -> None:
    """Blank lines, CRLF, leading spaces, gzip, bare or wrapped unions: the same rows."""
    src = _fixture(jhists, "job_1526555215992_0002")
    text = src.read_text(encoding="utf-8")
    lines = text.splitlines()
    base = _comparable(phaseline_rows(src)[0])
    variants = {
        "spaced.jhist": "\r\n\r\n".join(lines[:2] + ["   " + ln for ln in lines[2:]]) + "\r\n",
        "bare.jhist": re.sub(r'\{"string":("(?:[^"\\]|\\.)*")\}', r"\1", text),
        "wrapped.jhist": re.sub(r'"(hostname|taskStatus)":("(?:[^"\\]|\\.)*")', r'"\1":{"string":\2}', text),
        "no-final-newline.jhist": text.rstrip("\n"),
    }
    for name, content in variants.items():
        (tmp_path / name).write_text(content, encoding="utf-8", newline="")
    with gzip.open(tmp_path / "zipped.jhist", "wb") as gz:
        gz.write(src.read_bytes())
    for name in [*variants, "zipped.jhist"]:
        tables, cut, _ = phaseline_rows(tmp_path / name)
        assert cut is None, name
        assert _comparable(tables) == base, name


def test_unknown_event_type_lands_in_events(jhists: list[Path], tmp_path: Path) -> None:
    src, lines = _job_0004(jhists)
    novel = '{"type":"JOB_FROBNICATED","event":{"org.example.Frob":{"jobid":"job_1526555215992_0004","finishTime":7}}}\n'
    copy = tmp_path / "novel.jhist"
    copy.write_text("".join([*lines[:5], novel, *lines[5:]]))
    tables, cut, ctx = phaseline_rows(copy)
    assert cut is None
    assert ctx.unknown == {"JOB_FROBNICATED": 1}
    (frob,) = [e for e in tables["events"] if e["event_type"] == "JOB_FROBNICATED"]
    assert (frob["seq"], frob["ts_ms"], frob["job_id"]) == (6, 7, "job_1526555215992_0004")
    original = _comparable(phaseline_rows(src)[0])
    assert {k: v for k, v in _comparable(tables).items() if k != "events"} == {
        k: v for k, v in original.items() if k != "events"
    }


def test_reduce_reopened_after_its_counters_were_written(jhists: list[Path], tmp_path: Path) -> None:
    """A finished reduce is never re-run by the AM; if a file says so anyway, the task resets and a note says why."""
    src, lines = _job_0004(jhists)
    events = _raw_events(src.read_bytes())
    (fin,) = [e for _, _, e in events if e["type"] == "REDUCE_ATTEMPT_FINISHED"]
    done = next(iter(fin["event"].values()))
    (task_fin_line,) = [n for n, _, e in events if e["type"] == "TASK_FINISHED" and "_r_" in str(e)]
    kill = killed_attempt_line(done, "REDUCE", done["finishTime"] + 1, "")
    copy = tmp_path / "reopened.jhist"
    copy.write_text("".join([*lines[:task_fin_line], kill, *lines[task_fin_line:]]))
    tables, cut, ctx = phaseline_rows(copy)
    assert cut is None
    (task,) = [t for t in tables["tasks"] if t["task_id"] == done["taskid"]]
    assert (task["status"], task["successful_attempt_id"], task["finish_ms"]) == (None, None, None)
    assert any("re-opened" in n and done["taskid"] in n for n in ctx.notes)
    assert [c for c in tables["counters"] if c["scope"] == "task" and c["task_id"] == done["taskid"]]


def _payload(event: dict[str, Any]) -> dict[str, Any]:
    return next(iter(event["event"].values()))  # type: ignore[no-any-return]


def test_a_job_finished_written_again_replaces_the_job_counters(jhists: list[Path], tmp_path: Path) -> None:
    # Every JOB_FINISHED had added its job counters: the job's totals twice, each sum doubled
    # (Hadoop's parser keeps the last one's)
    src, lines = _job_0004(jhists)
    ((_, _, fin),) = [x for x in _raw_events(src.read_bytes()) if x[2]["type"] == "JOB_FINISHED"]
    again = json.loads(json.dumps(fin))
    payload = _payload(again)
    payload["finishTime"] += 1000
    first = payload["totalCounters"]["groups"][0]["counts"][0]
    first["value"] += 100
    copy = tmp_path / "twice.jhist"
    copy.write_text("".join(lines).rstrip("\n") + "\n" + json.dumps(again) + "\n")
    tables, cut, _ = phaseline_rows(copy)
    pristine, _, _ = phaseline_rows(src)
    assert cut is None
    totals = [
        (c["group_name"], c["counter_name"], c["value"])
        for c in tables["counters"]
        if c["scope"] == "job_total"
    ]
    expected = [(c["group_name"], c["counter_name"], c["value"] + 100 * (c["counter_name"] == first["name"]))
                for c in pristine["counters"] if c["scope"] == "job_total"]  # fmt: skip
    assert sorted(totals) == sorted(expected)
    assert tables["jobs"][0]["finish_ms"] == payload["finishTime"]


def test_a_task_failed_without_counters_leaves_a_rerun_its_counters(
    jhists: list[Path], tmp_path: Path
) -> None:
    # A reduce whose first attempt failed and whose TASK_FAILED (counters null) came before its re-run:
    # the null had marked the task's counters written, and the re-run's TASK_FINISHED then left none
    src, lines = _job_0004(jhists)
    events = _raw_events(src.read_bytes())
    (at,) = [n for n, _, e in events if e["type"] == "REDUCE_ATTEMPT_STARTED"]
    started = json.loads(lines[at - 1])
    task_id = _payload(started)["taskid"]
    failed_task = {"type": "TASK_FAILED", "event": {"org.apache.hadoop.mapreduce.jobhistory.TaskFailed": {
        "taskid": task_id, "taskType": "REDUCE", "finishTime": _payload(started)["startTime"], "error": "boom",
        "failedDueToAttempt": None, "status": "FAILED", "counters": None}}}  # fmt: skip
    copy = tmp_path / "rerun.jhist"
    copy.write_text("".join([*lines[: at - 1], json.dumps(failed_task) + "\n", *lines[at - 1 :]]))
    tables, _, ctx = phaseline_rows(copy)
    pristine, _, _ = phaseline_rows(src)

    def task_counters(of: dict[str, list[dict[str, Any]]]) -> list[tuple[str, int]]:
        return sorted((c["counter_name"], c["value"]) for c in of["counters"]
                      if c["scope"] == "task" and c["task_id"] == task_id)  # fmt: skip

    assert task_counters(tables) == task_counters(pristine) != []
    assert not any("finished twice" in n for n in ctx.notes)


def test_without_a_schema_type_wrapped_counters_of_failed_attempts_are_read(
    jhists: list[Path], tmp_path: Path
) -> None:
    # Hadoop 2.7+ writes a failed attempt's counters as a ["null", "JhCounters"] union, type-wrapped.
    # With line 2 unusable, the reader knew no union, and skipped every such attempt
    src, lines = _job_0004(jhists)
    events = _raw_events(src.read_bytes())
    (at,) = [n for n, _, e in events if e["type"] == "REDUCE_ATTEMPT_FINISHED"]
    done = _payload(json.loads(lines[at - 1]))
    failed = {"type": "REDUCE_ATTEMPT_FAILED", "event": {
        "org.apache.hadoop.mapreduce.jobhistory.TaskAttemptUnsuccessfulCompletion": {
            "taskid": done["taskid"], "taskType": "REDUCE", "attemptId": done["attemptId"][:-1] + "7",
            "finishTime": done["finishTime"] - 5, "hostname": done["hostname"], "port": done["port"],
            "rackname": done["rackname"], "status": "FAILED", "error": "boom",
            "counters": {"org.apache.hadoop.mapreduce.jobhistory.JhCounters": done["counters"]},
            "clockSplits": [], "cpuUsages": [], "vMemKbytes": [], "physMemKbytes": []}}}  # fmt: skip
    # the attempt started (an unsuccessful end of an attempt that never started is no attempt, as
    # Hadoop's parser has it)
    (began,) = [n for n, _, e in events if e["type"] == "REDUCE_ATTEMPT_STARTED"]
    started = json.loads(lines[began - 1])
    _payload(started)["attemptId"] = done["attemptId"][:-1] + "7"
    body = [*lines[2 : at - 1], json.dumps(started) + "\n", json.dumps(failed) + "\n", *lines[at - 1 :]]
    for schema_line in (lines[1], '{"type": "record", "name": \n'):  # the writer's schema, then a damaged one
        copy = tmp_path / "wrapped.jhist"
        copy.write_text("".join([lines[0], schema_line, *body]))
        tables, _, ctx = phaseline_rows(copy)
        assert [s.message for s in ctx.skipped if "REDUCE_ATTEMPT_FAILED" in s.message] == []
        (attempt,) = [a for a in tables["attempts"] if a["attempt_id"] == done["attemptId"][:-1] + "7"]
        assert attempt["status"] == "FAILED"
        assert [c for c in tables["counters"] if c["attempt_id"] == attempt["attempt_id"]]
