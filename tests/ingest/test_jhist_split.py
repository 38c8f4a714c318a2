"""A ``.jhist`` read in byte ranges and merged (:mod:`ingest.jhist_split`, :mod:`ingest.jhist_merge`,
:mod:`ingest.split_reading`) gives the tables of the file read whole.

Every real fixture is cut into ranges of a few lines (or of one line each) and compared, table by
table as multisets of rows (the store keeps no row order), with the whole read; so are the
skipped lines, notes, unknown events, events read and the error the file ends with.  Hand-made
histories put Hadoop's rules across a cut: an attempt started in one range and finished in the
next, a failed attempt and then a successful one, a map output lost after its task succeeded.
Through the pipeline, a file read in ranges by two workers lands as one source, as read whole.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ingest.base import ReadContext, RowBlock, iter_rows
from ingest.file_reading import Work
from ingest.jhist import read_jhist
from ingest.jhist_merge import merge_ranges, read_jhist_split
from ingest.jhist_split import Span, line_cuts, read_range
from ingest.pipeline import ingest_paths
from ingest.split_reading import read_range_work
from phaseline import schemas
from phaseline.errors import PhaselineError
from phaseline.store import Store
from phaseline.verify import verify_store
from tests.conftest import FIXTURES

_JH = "org.apache.hadoop.mapreduce.jobhistory."
JOB = "job_1526555215992_0009"
MAP = "task_1526555215992_0009_m_000000"
RED = "task_1526555215992_0009_r_000000"


def _jhist_fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.jhist") if p.is_file())


def _schema_line() -> bytes:
    seed = next(p for p in _jhist_fixtures() if p.name.startswith("job_1526555215992_0001"))
    return seed.read_bytes().split(b"\n")[1]


Reading = tuple[Counter[tuple[str, str]], list[str], set[str], dict[str, int], int, tuple[str, str] | None]


def _reading(rows: Any, ctx: ReadContext) -> Reading:
    """Rows as a multiset (table, row), skipped lines, notes, unknown events, events read, the final error."""
    got: Counter[tuple[str, str]] = Counter()
    error = None
    try:
        for r in iter_rows(rows):
            got[(r.table, repr(sorted(r.as_dict().items())))] += 1
    except PhaselineError as exc:
        error = (type(exc).__name__, str(exc))
    return got, [str(e) for e in ctx.skipped], set(ctx.notes), dict(ctx.unknown), ctx.events_read, error


def whole_and_split(path: Path, spans: list[Span]) -> tuple[Reading, Reading]:
    whole_ctx, split_ctx = ReadContext(path), ReadContext(path)
    whole = _reading(read_jhist(path, whole_ctx), whole_ctx)
    split = _reading(read_jhist_split(path, split_ctx, spans), split_ctx)
    return whole, split


def _not_read_whole(reading: Reading) -> None:
    assert not [n for n in reading[2] if n.startswith("read whole")], "the ranges were not merged"


@pytest.mark.parametrize("range_bytes", [1, 3_000])
@pytest.mark.parametrize("path", _jhist_fixtures(), ids=lambda p: p.name)
def test_fixture_in_ranges_reads_as_whole(path: Path, range_bytes: int) -> None:
    spans = line_cuts(path, range_bytes)
    assert len(spans) > 2
    whole, split = whole_and_split(path, spans)
    _not_read_whole(split)
    assert split == whole
    assert whole[4] > 0


# ---------------------------------------------------------------------- hand-made histories
def _event(etype: str, record: str, **payload: Any) -> bytes:
    return json.dumps({"type": etype, "event": {_JH + record: payload}}, separators=(",", ":")).encode()


def _counters(value: int) -> dict[str, Any]:
    counts = [{"name": "CPU_MILLISECONDS", "displayName": "CPU", "value": value},
              {"name": "MAP_OUTPUT_RECORDS", "displayName": "out", "value": value * 10}]  # fmt: skip
    return {"name": "COUNTERS", "groups": [{"name": "org.apache.hadoop.mapreduce.TaskCounter",
                                            "displayName": "Map-Reduce Framework", "counts": counts}]}  # fmt: skip


def _attempt(n: int, task: str = MAP) -> str:
    return task.replace("task_", "attempt_") + f"_{n}"


def _started(n: int, task: str = MAP) -> bytes:
    kind = "MAP" if task == MAP else "REDUCE"
    return _event(f"{kind}_ATTEMPT_STARTED", "TaskAttemptStarted", taskid=task, taskType=kind,
                  attemptId=_attempt(n, task), startTime=1000 + n, trackerName="host1", httpPort=8042,
                  containerId=f"container_1526555215992_0009_01_00000{n}", locality={"string": "NODE_LOCAL"})  # fmt: skip


def _map_finished(n: int, value: int) -> bytes:
    return _event("MAP_ATTEMPT_FINISHED", "MapAttemptFinished", taskid=MAP, attemptId=_attempt(n), taskType="MAP",
                  taskStatus="SUCCEEDED", mapFinishTime=2000 + n, finishTime=2100 + n, hostname="host1",
                  rackname="/default-rack", state="map", counters=_counters(value))  # fmt: skip


def _unsuccessful(n: int, status: str, value: int | None) -> bytes:
    return _event(f"MAP_ATTEMPT_{status}", "TaskAttemptUnsuccessfulCompletion", taskid=MAP, taskType="MAP",
                  attemptId=_attempt(n), finishTime=1500 + n, hostname="host2", status=status,
                  error=f"{status.lower()} on purpose",
                  counters=None if value is None else _counters(value))  # fmt: skip


def _task_finished(task: str, value: int, attempt: str) -> bytes:
    kind = "MAP" if task == MAP else "REDUCE"
    return _event("TASK_FINISHED", "TaskFinished", taskid=task, taskType=kind, finishTime=3000, status="SUCCEEDED",
                  successfulAttemptId=attempt, counters=_counters(value))  # fmt: skip


def _history(tmp_path: Path, body: list[bytes | None]) -> tuple[Path, list[Span]]:
    """A history of ``body`` (``None``: cut here) with its job's start and end; the file and its ranges."""
    head = [b"Avro-Json", _schema_line(),
            _event("JOB_SUBMITTED", "JobSubmitted", jobid=JOB, jobName="split", userName="u", submitTime=1,
                   jobQueueName="default"),
            _event("JOB_INITED", "JobInited", jobid=JOB, launchTime=2, totalMaps=1, totalReduces=1,
                   jobStatus="INITED", uberized=False),
            _event("TASK_STARTED", "TaskStarted", taskid=MAP, taskType="MAP", startTime=10, splitLocations="host1"),
            _event("TASK_STARTED", "TaskStarted", taskid=RED, taskType="REDUCE", startTime=11, splitLocations="")]  # fmt: skip
    tail = [_started(0, RED),
            _event("REDUCE_ATTEMPT_FINISHED", "ReduceAttemptFinished", taskid=RED, attemptId=_attempt(0, RED),
                   taskType="REDUCE", taskStatus="SUCCEEDED", shuffleFinishTime=4000, sortFinishTime=4001,
                   finishTime=4100, hostname="host1", rackname="/r", state="reduce", counters=_counters(5)),
            _task_finished(RED, 6, _attempt(0, RED)),
            _event("JOB_FINISHED", "JobFinished", jobid=JOB, finishTime=5000, finishedMaps=1, finishedReduces=1,
                   failedMaps=1, failedReduces=0, totalCounters=_counters(99))]  # fmt: skip
    data = bytearray()
    cuts: list[tuple[int, int]] = []
    lines = 0
    for line in [*head, *body, *tail]:
        if line is None:
            cuts.append((len(data), lines))
            continue
        data += line + b"\n"
        lines += 1
    path = tmp_path / f"{JOB}.jhist"
    path.write_bytes(bytes(data))
    bounds = [(0, 0), *cuts]
    ends = [c for c, _ in cuts] + [len(data)]
    return path, [Span(start, end, before) for (start, before), end in zip(bounds, ends, strict=True)]


def _tables(path: Path, spans: list[Span]) -> dict[str, list[dict[str, Any]]]:
    """The rows of ``path`` read in ``spans``, by table."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in iter_rows(read_jhist_split(path, ReadContext(path), spans)):
        out.setdefault(r.table, []).append(r.as_dict())
    return out


def _log_sizes(path: Path, spans: list[Span]) -> list[int]:
    return [len(read_range(path, spans, i, lambda _: None, lambda _: None).log) for i in range(len(spans))]


def test_attempt_started_in_one_range_failed_in_the_next_then_a_successful_attempt(tmp_path: Path) -> None:
    """A failed attempt (its counters kept) and the successful one after it, each across a cut: the task's
    counters and successful attempt are TASK_FINISHED's, as Hadoop's parser has them."""
    path, spans = _history(tmp_path, [
        _started(0), None, _unsuccessful(0, "FAILED", 7), _started(1), None, _map_finished(1, 8), None,
        _task_finished(MAP, 9, _attempt(1)),
    ])  # fmt: skip
    # Left to the merge: a0's FAILED and a1's STARTED (their task started in range 0); a1's finish; the map's
    # TASK_FINISHED, the reduce's three events (started in range 0 too) and JOB_FINISHED (every job event).
    assert _log_sizes(path, spans)[1:] == [2, 1, 5]
    whole, split = whole_and_split(path, spans)
    _not_read_whole(split)
    assert split == whole
    tables = _tables(path, spans)
    (task,) = [t for t in tables["tasks"] if t["task_id"] == MAP]
    assert (task["status"], task["successful_attempt_id"]) == ("SUCCEEDED", _attempt(1))
    attempts = {a["attempt_id"]: a for a in tables["attempts"]}
    assert (attempts[_attempt(0)]["status"], attempts[_attempt(0)]["error"]) == ("FAILED", "failed on purpose")
    assert attempts[_attempt(1)]["status"] == "SUCCEEDED"
    cpu = {(c["scope"], c["attempt_id"]): c["value"] for c in tables["counters"]
           if c["task_id"] == MAP and c["counter_name"] == "CPU_MILLISECONDS"}  # fmt: skip
    assert cpu == {("attempt", _attempt(0)): 7, ("attempt", _attempt(1)): 8, ("task", None): 9}


def test_lost_map_output_in_a_later_range_replaces_the_counters_a_range_wrote(tmp_path: Path) -> None:
    """The attempt that made the map task succeed is killed two ranges later (its output lost) and a
    re-run succeeds: the task counters range 0 wrote at its end are dropped for the re-run's."""
    path, spans = _history(tmp_path, [
        _started(0), _map_finished(0, 1), _task_finished(MAP, 2, _attempt(0)), None, _started(9, RED), None,
        _unsuccessful(0, "KILLED", 3), _started(1), _map_finished(1, 4), _task_finished(MAP, 5, _attempt(1)),
    ])  # fmt: skip
    results = [read_range(path, spans, i, lambda _: None, lambda _: None) for i in range(len(spans))]
    assert MAP in results[0].held_tasks
    # range 0's rows the merge replaces: the map's held counters, the finished task and attempt a later event
    # took up (the merge writes their rows, and the reduce's: still running at range 0's end, range 0 wrote none)
    assert merge_ranges(path, ReadContext(path), results).drops == {
        0: {"counters": {MAP}, "tasks": {MAP}, "attempts": {_attempt(0)}}
    }
    whole, split = whole_and_split(path, spans)
    _not_read_whole(split)
    assert split == whole
    tables = _tables(path, spans)
    task_cpu = [c["value"] for c in tables["counters"]
                if c["scope"] == "task" and c["task_id"] == MAP and c["counter_name"] == "CPU_MILLISECONDS"]  # fmt: skip
    assert task_cpu == [5]
    (killed,) = [a for a in tables["attempts"] if a["attempt_id"] == _attempt(0)]
    assert killed["status"] == "KILLED"


def test_a_range_writes_its_finished_tasks_and_attempts_the_merge_the_others(tmp_path: Path) -> None:
    """The map task and its attempt finish in range 0: range 0 writes their rows (at its end, beside its held
    counters); the reduce is still running at range 0's end and finishes in range 1: the merge writes its."""
    path, spans = _history(tmp_path, [_started(0), _map_finished(0, 1), _task_finished(MAP, 2, _attempt(0)), None])
    held: list[list[RowBlock]] = [[], []]
    results = [read_range(path, spans, i, lambda _: None, held[i].append) for i in range(2)]
    outcome = merge_ranges(path, ReadContext(path), results)
    assert outcome.drops == {}

    def ids(blocks: list[Any], table: str, column: str) -> list[str]:
        return [v for b in blocks if isinstance(b, RowBlock) and b.table == table for v in b.columns[column]]

    assert (ids(held[0], "tasks", "task_id"), ids(held[0], "attempts", "attempt_id")) == ([MAP], [_attempt(0)])
    assert (ids(held[1], "tasks", "task_id"), ids(held[1], "attempts", "attempt_id")) == ([], [])
    merged = [(r.table, r.as_dict()) for r in iter_rows(outcome.items)]
    assert [r["task_id"] for table, r in merged if table == "tasks"] == [RED]
    assert [r["attempt_id"] for table, r in merged if table == "attempts"] == [_attempt(0, RED)]
    whole, split = whole_and_split(path, spans)
    _not_read_whole(split)
    assert split == whole


def test_killed_before_it_started_is_dropped_across_a_cut(tmp_path: Path) -> None:
    """A speculative attempt killed before it started, in another range than its task's start: no attempt
    (Hadoop's handleTaskAttemptFailedEvent), its event kept."""
    path, spans = _history(tmp_path, [
        _started(0), None, _unsuccessful(5, "KILLED", None), _map_finished(0, 1), _task_finished(MAP, 2, _attempt(0)),
    ])  # fmt: skip
    whole, split = whole_and_split(path, spans)
    _not_read_whole(split)
    assert split == whole
    assert _attempt(5) not in {a["attempt_id"] for a in _tables(path, spans)["attempts"]}


def test_corrupt_line_in_a_later_range_is_named_by_its_true_line(tmp_path: Path) -> None:
    """A corrupt line in range 2: skipped with the file, its line and byte offset in the file, every other
    event kept, as read whole."""
    path, spans = _history(tmp_path, [_started(0), None, _map_finished(0, 1), None, b'{"type":"MAP_ATT', None,
                                      _task_finished(MAP, 2, _attempt(0))])  # fmt: skip
    whole, split = whole_and_split(path, spans)
    assert split == whole
    lines = path.read_bytes().split(b"\n")
    bad_line = lines.index(b'{"type":"MAP_ATT') + 1
    offset = sum(len(x) + 1 for x in lines[: bad_line - 1])
    (skipped,) = split[1]
    assert skipped.startswith(f"{path}:{bad_line} (byte {offset}): malformed event line")
    assert spans[2].start == offset


def test_second_history_in_a_later_range_ends_the_file_there(tmp_path: Path) -> None:
    path, spans = _history(tmp_path, [_started(0), None, _map_finished(0, 1), b"Avro-Json", None,
                                      _task_finished(MAP, 2, _attempt(0))])  # fmt: skip
    whole, split = whole_and_split(path, spans)
    assert split == whole
    assert split[5] is not None
    assert "another history begins here" in split[5][1]


# ---------------------------------------------------------------------- the pipeline
def _store_tables(root: Path) -> dict[str, list[str]]:
    con = Store(root).connect()
    return {name: sorted(map(repr, con.execute(f'SELECT * FROM raw."{name}"').fetchall()))
            for name in schemas.TABLES if name != "sources"}  # fmt: skip


def _sources(root: Path) -> list[tuple[Any, ...]]:
    con = Store(root).connect()
    return sorted(con.execute("SELECT path, status, error, events_read, rows_written, rows_quarantined, job_ids "
                              "FROM raw.sources").fetchall())  # fmt: skip


def test_two_workers_read_files_in_ranges_into_the_same_store(tmp_path: Path) -> None:
    """The fixtures and a corrupt copy, each read in ranges by two workers: the store's tables and sources
    equal one worker's whole reads."""
    corrupt = tmp_path / "corrupt" / "job_1526555215992_0001-corrupt.jhist"
    corrupt.parent.mkdir()
    seed = next(p for p in _jhist_fixtures() if p.name.startswith("job_1526555215992_0001"))
    lines = seed.read_bytes().split(b"\n")
    bad = next(i for i, line in enumerate(lines) if b"MAP_ATTEMPT_FINISHED" in line)
    lines[bad] = lines[bad][: len(lines[bad]) // 2]  # a line cut in the middle of the file
    corrupt.write_bytes(b"\n".join(lines))
    paths = [*_jhist_fixtures(), corrupt]
    whole = ingest_paths(paths, Store(tmp_path / "whole"), workers=1)
    split = ingest_paths(paths, Store(tmp_path / "split"), workers=2, split_bytes=2_000, start_method="fork")
    assert [(r.path, r.status, r.error, r.events_read, r.rows) for r in split.results] == [
        (r.path, r.status, r.error, r.events_read, r.rows) for r in whole.results
    ]
    landed = {r.path: r for r in split.results}[str(corrupt.resolve())]
    assert landed.status == "partial"
    assert f":{bad + 1} (byte " in (landed.error or "")
    assert _sources(tmp_path / "split") == _sources(tmp_path / "whole")
    assert verify_store(Store(tmp_path / "split")).ok  # every count reconciles
    assert _store_tables(tmp_path / "split") == _store_tables(tmp_path / "whole")
    # read in ranges indeed: a source's rows are in several staged files per table
    assert len(Store(tmp_path / "split").manifest().files) > 2 * len(Store(tmp_path / "whole").manifest().files)


def test_a_lone_history_large_enough_is_read_in_ranges_by_the_workers(tmp_path: Path) -> None:
    """One file alone gets the workers only where they read it in ranges (ingest.plan.read_in_ranges)."""
    seed = next(p for p in _jhist_fixtures() if p.name.startswith("job_1526555215992_0001"))
    whole = ingest_paths([seed], Store(tmp_path / "whole"), workers=1)
    split = ingest_paths([seed], Store(tmp_path / "split"), workers=2, split_bytes=2_000, start_method="fork")
    assert [(r.status, r.rows) for r in split.results] == [(r.status, r.rows) for r in whole.results]
    assert _store_tables(tmp_path / "split") == _store_tables(tmp_path / "whole")
    assert len(Store(tmp_path / "split").manifest().files) > len(Store(tmp_path / "whole").manifest().files)


def test_a_range_over_the_time_limit_fails_its_file(tmp_path: Path) -> None:
    path, spans = _history(tmp_path, [_started(0), None, _map_finished(0, 1), _task_finished(MAP, 2, _attempt(0))])
    work = Work(str(path), path, "0" * 64, path.stat().st_size, tuple(spans))
    staging = tmp_path / "staging"
    outcome = read_range_work(work, work.spans, 1, staging, timeout_s=1e-6)
    assert outcome.result is None
    assert outcome.failure is not None
    assert "per-file time limit" in outcome.failure
    assert "range 2 of 2" in outcome.failure
    assert not list(staging.rglob("*.parquet"))  # nothing of the range stays staged


def test_a_compressed_history_is_read_whole(tmp_path: Path) -> None:
    """A gzipped ``.jhist`` has no place to start in the middle: one process reads it, however large."""
    seed = next(p for p in _jhist_fixtures() if p.name.startswith("job_1526555215992_0001"))
    packed = tmp_path / (seed.name + ".gz")
    packed.write_bytes(gzip.compress(seed.read_bytes()))
    store = Store(tmp_path / "store")
    (result,) = ingest_paths([packed], store, workers=2, split_bytes=1_000, start_method="fork").results
    assert result.status == "landed"
    assert len({f.table for f in store.manifest().files}) == len(store.manifest().files)  # a file per table
