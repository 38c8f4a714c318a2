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
from oracle_util import (
    actual_from_phaseline,
    compare_with_hadoop,
    expected_from_hadoop,
    hadoop_parse,
    killed_attempt_line,
    phaseline_rows,
)

from ingest import jhist_packed, jhist_state

pytestmark = pytest.mark.slow

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


def test_every_fixture_equals_hadoop(corpus: dict[str, Any]) -> None:
    for path in corpus["pristine"]:
        h = corpus["hadoop"][str(path)]
        assert h["parse_exception"] is None, f"Hadoop stopped early on pristine {path.name}"
        compare_with_hadoop(path, h)


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
        compare_with_hadoop(path, h)


def test_lost_map_output_resets_the_task_like_hadoop(corpus: dict[str, Any]) -> None:
    path = corpus["lost"]
    h = corpus["hadoop"][str(path)]
    compare_with_hadoop(path, h)
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
        compare_with_hadoop(path, corpus["hadoop"][str(path)])
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
