"""phaseline's .jhist reader against Hadoop's own JobHistoryParser (the oracle).

One JVM parses every ``.jhist`` under the fixtures plus a few variants written
to a temporary directory; every job, task and attempt field and every counter
must equal Hadoop's, except where Hadoop and the file disagree in these
documented ways (see ``ingest.jhist``'s docstring):

* ``-1`` (Hadoop's "unset" for times and counts) and ``""`` (unset strings) are NULL.
* TASK_FAILED: Hadoop reports FAILED for every failed task; the event's own
  ``status`` says KILLED for tasks killed because the job failed, and phaseline
  keeps KILLED.
* Failed/killed attempts: Hadoop copies the finish time into map-finish,
  shuffle-finish and sort-finish; the file holds no such times, so phaseline
  leaves them NULL.
* A job with no JOB_FINISHED/FAILED/KILLED (a cut file): Hadoop reports its
  constructor's 0 for finished/failed/killed counts; phaseline NULL (unknown).
* Attempts that never completed: Hadoop's hostname is empty; phaseline uses the
  STARTED event's trackerName.
* An attempt killed after it finished (its map output was lost): Hadoop keeps
  the KILLED event's (empty) counters and copies its time into the phase
  times; phaseline keeps the counters and phase times the attempt reported in
  its *_FINISHED event.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from oracle_util import hadoop_parse, killed_attempt_line, phaseline_rows

from ingest import jhist_packed, jhist_state
from ingest.base import open_binary
from phaseline.hadoop_names import split_host, task_type
from phaseline.schemas import normalize_status

pytestmark = pytest.mark.slow

TIME_COLUMNS = ("start_ms", "finish_ms")
PHASE_COLUMNS = ("map_finish_ms", "shuffle_finish_ms", "sort_finish_ms")
JOB_COLUMNS = (
    "job_id", "name", "user", "queue", "status", "submit_ms", "launch_ms", "finish_ms",
    "total_maps", "total_reduces", "finished_maps", "finished_reduces",
    "failed_maps", "failed_reduces", "killed_maps", "killed_reduces", "uberized",
)  # fmt: skip


def _null(v: Any) -> Any:
    return None if v == -1 or v == "" else v


def _raw_events(path: Path) -> list[dict[str, Any]]:
    """The file's events decoded with the standard library (independent of the reader; a binary
    history's as the JSON lines ``open_binary`` renders it as)."""
    events = []
    with open_binary(path) as fh:
        text = fh.read().decode("utf-8")
    for line in text.splitlines()[2:]:
        try:
            events.append(json.loads(line))
        except ValueError:
            continue  # blank, or the cut line of a truncated copy
    return events


def _killed_task_ids(path: Path) -> set[str]:
    killed = set()
    for ev in _raw_events(path):
        if ev["type"] == "TASK_FAILED":
            (payload,) = ev["event"].values()
            if payload.get("status") == "KILLED":
                killed.add(payload["taskid"])
    return killed


def _finished_then_killed(path: Path) -> dict[str, dict[str, Any]]:
    """Attempts that failed or were killed after they finished -> their *_FINISHED payload."""
    finished: dict[str, dict[str, Any]] = {}
    lost = {}
    for ev in _raw_events(path):
        (payload,) = ev["event"].values()
        if ev["type"].endswith("_ATTEMPT_FINISHED"):
            finished[payload["attemptId"]] = payload
        elif ev["type"].endswith(("_ATTEMPT_KILLED", "_ATTEMPT_FAILED")) and payload["attemptId"] in finished:
            lost[payload["attemptId"]] = finished[payload["attemptId"]]
    return lost


def expected_from_hadoop(path: Path, h: dict[str, Any]) -> dict[str, Any]:
    """Hadoop's JobInfo, in phaseline's columns, with the documented differences applied."""
    job = h["job"]
    killed = _killed_task_ids(path)
    lost = _finished_then_killed(path)
    jobs = {c: _null(job[c]) for c in JOB_COLUMNS}
    jobs["status"] = normalize_status(jobs["status"])
    jobs["diagnostics"] = _null(job["error_info"])
    if jobs["status"] is None:  # no JOB_FINISHED/FAILED/KILLED: Hadoop's 0s are its defaults
        jobs |= {c: None for c in JOB_COLUMNS if c.startswith(("finished_", "failed_", "killed_"))}
    counters = set()
    for scope, key in (
        ("job_total", "total_counters"),
        ("job_map", "map_counters"),
        ("job_reduce", "reduce_counters"),
    ):
        counters |= {(scope, None, None, g, n, v) for g, n, v in job[key] or ()}
    tasks, attempts = {}, {}
    for t in h["tasks"]:
        tid = t["task_id"]
        status = normalize_status(t["status"])
        if status == "FAILED" and tid in killed:
            status = "KILLED"
        tasks[tid] = {
            "task_type": task_type(t["task_type"]),
            "status": status,
            "start_ms": _null(t["start_ms"]),
            "finish_ms": _null(t["finish_ms"]),
            "successful_attempt_id": t["successful_attempt_id"],
            "splits": _null(t["splits"]),
            "error": _null(t["error"]),
        }
        counters |= {("task", tid, None, g, n, v) for g, n, v in t["counters"] or ()}
        for a in t["attempts"]:
            aid = a["attempt_id"]
            status = normalize_status(_null(a["status"]))
            unsuccessful = status in ("FAILED", "KILLED")
            host = _null(a["hostname"]) or _null(a["tracker_name"])
            attempts[aid] = {
                "task_id": tid,
                "task_type": task_type(a["task_type"]),
                "status": status,
                "start_ms": _null(a["start_ms"]),
                "finish_ms": _null(a["finish_ms"]),
                **{c: None if unsuccessful else _null(a[c]) for c in PHASE_COLUMNS},
                "host": split_host(host)[0] if host else None,
                "rack": _null(a["rackname"]),
                "container_id": a["container_id"],
                "error": _null(a["error"]),
            }
            if aid in lost:  # phase times and counters stay those of its *_FINISHED event
                done = lost[aid]
                attempts[aid]["map_finish_ms"] = done.get("mapFinishTime")
                attempts[aid]["shuffle_finish_ms"] = done.get("shuffleFinishTime")
                attempts[aid]["sort_finish_ms"] = done.get("sortFinishTime")
                for g in done["counters"]["groups"]:
                    counters |= {("attempt", tid, aid, g["name"], c["name"], c["value"]) for c in g["counts"]}
            else:
                counters |= {("attempt", tid, aid, g, n, v) for g, n, v in a["counters"] or ()}
    return {"jobs": jobs, "tasks": tasks, "attempts": attempts, "counters": counters, "lost": lost}


def actual_from_phaseline(tables: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    (job,) = tables["jobs"]
    jobs = {c: job[c] for c in (*JOB_COLUMNS, "diagnostics")}
    tasks = {
        t["task_id"]: {k: v for k, v in t.items() if k not in ("job_id", "task_id")}
        for t in tables.get("tasks", [])
    }
    keep = (
        "task_id",
        "task_type",
        "status",
        *TIME_COLUMNS,
        *PHASE_COLUMNS,
        "host",
        "rack",
        "container_id",
        "error",
    )
    attempts = {a["attempt_id"]: {k: a[k] for k in keep} for a in tables.get("attempts", [])}
    counters = {
        (c["scope"], c["task_id"], c["attempt_id"], c["group_name"], c["counter_name"], c["value"])
        for c in tables.get("counters", [])
    }
    return {"jobs": jobs, "tasks": tasks, "attempts": attempts, "counters": counters}


def _cut_mid_line(src: Path, dst: Path, fraction: float) -> Path:
    """Copy ``src`` cut in the middle of the event line at ``fraction`` of its events."""
    data = src.read_bytes()
    starts = [m.end() for m in re.finditer(rb"\n", data)][2:-1]  # event lines (after line 2)
    start = starts[int(len(starts) * fraction)]
    end = data.index(b"\n", start)
    dst.write_bytes(data[: start + (end - start) // 2])
    return dst


@pytest.fixture(scope="module")
def corpus(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Fixtures + variants, and Hadoop's parse of all of them from one JVM run."""
    tmp = tmp_path_factory.mktemp("jhist-oracle")
    pristine = sorted(fixtures_dir.rglob("*.jhist"))
    assert len(pristine) >= 10, "the shared fixtures should hold at least ten .jhist files"
    by_name = {p.name: p for p in pristine}
    sleep = next(p for p in pristine if "derived" not in str(p) and "1329348432655_0001-10" in p.name)
    qmc = next(p for p in pristine if "1526555215992_0001" in p.name)
    failed = by_name["job_0.23.9-FAILED.jhist"]
    truncated = [
        _cut_mid_line(sleep, tmp / "sleep-cut-40.jhist", 0.40),
        _cut_mid_line(failed, tmp / "failed-cut-70.jhist", 0.70),
        _cut_mid_line(qmc, tmp / "qmc-cut-90.jhist", 0.90),
    ]
    # The map's successful attempt is killed after its task finished (its output was lost).
    lines = qmc.read_text(encoding="utf-8").splitlines(keepends=True)
    fin = next(i for i, ln in enumerate(lines) if '"type":"MAP_ATTEMPT_FINISHED"' in ln)
    done = json.loads(lines[fin])["event"]["org.apache.hadoop.mapreduce.jobhistory.MapAttemptFinished"]
    task_fin = next(
        i for i, ln in enumerate(lines) if '"type":"TASK_FINISHED"' in ln and done["taskid"] in ln
    )
    kill = killed_attempt_line(done, "MAP", done["finishTime"] + 5000, "Too many fetch failures")
    lost = tmp / "qmc-map-output-lost.jhist"
    lost.write_text("".join([*lines[: task_fin + 1], kill, *lines[task_fin + 1 :]]))
    refused = _refused_variants(qmc, tmp)
    files = [*pristine, *truncated, lost, *refused.values()]
    return {
        "pristine": pristine,
        "truncated": truncated,
        "lost": lost,
        "refused": refused,
        "qmc": qmc,
        "hadoop": hadoop_parse(files),
    }


def _refused_variants(qmc: Path, tmp: Path) -> dict[str, Path]:
    """Readable variants of a 2.7 file that Hadoop's parser refuses."""
    text = qmc.read_text(encoding="utf-8")
    # Union fields written bare (as 2.0-2.4 writers did, where those fields were plain strings).
    bare = tmp / "qmc-bare-unions.jhist"
    bare.write_text(re.sub(r'\{"string":("(?:[^"\\]|\\.)*")\}', r"\1", text))
    # A value type-wrapped where the writer's schema has no union (hostname is a plain string).
    wrapped = tmp / "qmc-wrapped-hostname.jhist"
    wrapped.write_text(re.sub(r'"hostname":("(?:[^"\\]|\\.)*")', r'"hostname":{"string":\1}', text))
    # The reduce task's TASK_STARTED is missing (a hand-trimmed or damaged file).
    no_start = tmp / "qmc-no-task-started.jhist"
    lines = text.splitlines(keepends=True)
    no_start.write_text("".join(ln for ln in lines if not ('"type":"TASK_STARTED"' in ln and "_r_" in ln)))
    return {"bare_unions": bare, "wrapped_hostname": wrapped, "no_task_started": no_start}


def _compare(path: Path, h: dict[str, Any]) -> None:
    assert h.get("fatal") is None, f"Hadoop refused {path}: {h.get('fatal')}"
    tables, _cut, _ctx = phaseline_rows(path)
    expected = expected_from_hadoop(path, h)
    actual = actual_from_phaseline(tables)
    assert actual["jobs"] == expected["jobs"], path.name
    assert actual["tasks"] == expected["tasks"], path.name
    assert actual["attempts"] == expected["attempts"], path.name
    keys = [
        (c["scope"], c["task_id"], c["attempt_id"], c["group_name"], c["counter_name"])
        for c in tables.get("counters", [])
    ]
    assert len(keys) == len(set(keys)), f"{path.name}: a counter is written twice"
    missing = expected["counters"] - actual["counters"]
    extra = actual["counters"] - expected["counters"]
    assert not missing, f"{path.name}: Hadoop has counters phaseline lacks: {sorted(missing)[:5]}"
    assert not extra, f"{path.name}: phaseline has counters Hadoop lacks: {sorted(extra)[:5]}"


def test_every_fixture_equals_hadoop(corpus: dict[str, Any]) -> None:
    for path in corpus["pristine"]:
        h = corpus["hadoop"][str(path)]
        assert h["parse_exception"] is None, f"Hadoop stopped early on pristine {path.name}"
        _compare(path, h)


def test_truncated_copies_equal_hadoops_partial_parse(corpus: dict[str, Any]) -> None:
    # Hadoop stops at the cut (parse_exception) and keeps what it read; phaseline yields
    # the same and raises TraceTruncatedError naming the cut line.
    for path in corpus["truncated"]:
        h = corpus["hadoop"][str(path)]
        assert h["parse_exception"] is not None, path.name
        _, cut, _ = phaseline_rows(path)
        assert cut is not None
        assert cut.line is not None
        assert cut.offset is not None
        assert cut.line == len(path.read_bytes().splitlines())
        _compare(path, h)


def test_lost_map_output_resets_the_task_like_hadoop(corpus: dict[str, Any]) -> None:
    path = corpus["lost"]
    h = corpus["hadoop"][str(path)]
    _compare(path, h)
    tables, _, _ = phaseline_rows(path)
    (lost_id,) = expected_from_hadoop(path, h)["lost"]
    attempt = next(a for a in tables["attempts"] if a["attempt_id"] == lost_id)
    task = next(t for t in tables["tasks"] if t["task_id"] == attempt["task_id"])
    assert attempt["status"] == "KILLED"
    assert attempt["error"] == "Too many fetch failures"
    assert task["status"] is None
    assert task["successful_attempt_id"] is None
    assert task["finish_ms"] is None
    assert not [c for c in tables["counters"] if c["scope"] == "task" and c["task_id"] == task["task_id"]]
    # The counters the attempt reported on finishing stay (Hadoop drops them).
    assert [c for c in tables["counters"] if c["attempt_id"] == lost_id]


def test_packed_tasks_and_attempts_equal_hadoop(
    corpus: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Finished tasks and attempts packed after every second new record (a large job's memory
    # bound, LIVE_RECORDS in ingest.jhist_state): every file still equals Hadoop's parse, the
    # lost map output too (its packed task and attempt are unpacked and re-opened).
    monkeypatch.setattr(jhist_state, "LIVE_RECORDS", 2)
    seen = {"packed": 0, "unpacked": 0}
    real_pack, real_take = jhist_packed.Packed.pack, jhist_packed.Packed.take

    def pack(self: Any, records: Any) -> None:
        seen["packed"] += len(records)
        real_pack(self, records)

    def take(self: Any, key: str) -> Any:
        record = real_take(self, key)
        seen["unpacked"] += record is not None
        return record

    monkeypatch.setattr(jhist_packed.Packed, "pack", pack)
    monkeypatch.setattr(jhist_packed.Packed, "take", take)
    for path in [*corpus["pristine"], *corpus["truncated"]]:
        _compare(path, corpus["hadoop"][str(path)])
    assert seen["packed"] >= 40
    test_lost_map_output_resets_the_task_like_hadoop(corpus)
    # The map output lost only at the end of the job: its task and attempt were packed long
    # before, come back from their chunks, and end as they do when nothing is packed.
    lines = corpus["lost"].read_text(encoding="utf-8").splitlines(keepends=True)
    kill = next(i for i, ln in enumerate(lines) if "Too many fetch failures" in ln)
    late = tmp_path / "qmc-map-output-lost-late.jhist"
    late.write_text("".join([*lines[:kill], *lines[kill + 1 : -1], lines[kill], lines[-1]]))
    packed_rows, _, _ = phaseline_rows(late)
    assert seen["unpacked"] >= 2
    reopened = next(t for t in packed_rows["tasks"] if t["task_id"] in lines[kill])
    assert reopened["status"] is None
    assert reopened["successful_attempt_id"] is None
    monkeypatch.undo()
    plain_rows, _, _ = phaseline_rows(late)
    assert actual_from_phaseline(packed_rows) == actual_from_phaseline(plain_rows)
    for table in ("tasks", "attempts", "counters"):
        assert sorted(map(repr, packed_rows[table])) == sorted(map(repr, plain_rows[table])), table


def test_files_hadoop_refuses_are_read(corpus: dict[str, Any]) -> None:
    """Readable files Hadoop's parser gives up on are read whole, with the same rows as the original."""
    refused = corpus["refused"]
    hadoop = corpus["hadoop"]
    # Avro's JsonDecoder wants {"string": ..} in a union and a bare string elsewhere;
    # JobHistoryParser throws a NullPointerException for an attempt of an unstarted task.
    assert "AvroTypeException" in hadoop[str(refused["bare_unions"])]["fatal"]
    assert "AvroTypeException" in hadoop[str(refused["wrapped_hostname"])]["fatal"]
    assert "NullPointerException" in hadoop[str(refused["no_task_started"])]["fatal"]

    original, _, _ = phaseline_rows(corpus["qmc"])
    for name, variant in refused.items():
        tables, cut, _ = phaseline_rows(variant)
        assert cut is None, name
        assert len(tables["attempts"]) == len(original["attempts"]), name
        assert actual_from_phaseline(tables)["counters"] == actual_from_phaseline(original)["counters"], name
    for name in ("bare_unions", "wrapped_hostname"):
        assert actual_from_phaseline(phaseline_rows(refused[name])[0]) == actual_from_phaseline(original)
    reduce_task = next(
        t for t in phaseline_rows(refused["no_task_started"])[0]["tasks"] if "_r_" in t["task_id"]
    )
    assert reduce_task["status"] == "SUCCEEDED"
    assert reduce_task["start_ms"] is None
    assert reduce_task["task_type"] == "REDUCE"
