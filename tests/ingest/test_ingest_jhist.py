"""The .jhist reader on the real fixtures, on edited copies of them, and under mutation.

Expected values come from the files themselves (their history-server file names,
their JSON decoded with the standard library) or from SOURCES.md, never from
positions inside a trace.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from collections import Counter
from operator import attrgetter
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle_util import killed_attempt_line, phaseline_rows

import ingest.jhist as jhist_module
from ingest.base import ReadContext, RowBlock
from ingest.jhist import read_jhist, sniff_jhist
from ingest.jhist_packed import Packed
from ingest.jhist_records import AttemptRecord
from ingest.pipeline import ingest_paths
from phaseline.errors import PhaselineError, TraceParseError, TraceTruncatedError
from phaseline.store import Store

# job_<cluster>_<n>-<submit>-<user>-<name>-<finish>-<maps>-<reduces>-<status>-<queue>[-<launch>].jhist
DONE_NAME = re.compile(
    r"^(?P<job>job_\d+_\d+)-(?P<submit>\d+)-(?P<user>[^-]+)-(?P<name>[^-]+)-(?P<finish>\d+)-"
    r"(?P<maps>-?\d+)-(?P<reduces>-?\d+)-(?P<status>[A-Z]+)-(?P<queue>[^-]+?)(?:-(?P<launch>\d+))?\.jhist$"
)


@pytest.fixture(scope="module")
def jhists(fixtures_dir: Path) -> list[Path]:
    found = sorted(fixtures_dir.rglob("*.jhist"))
    assert len(found) >= 10
    return found


def _fixture(jhists: list[Path], fragment: str) -> Path:
    (path,) = [p for p in jhists if fragment in str(p)]
    return path


def _raw_events(data: bytes) -> list[tuple[int, int, dict[str, Any]]]:
    """``(line_no, byte offset, event)`` for every event line, decoded with the standard library."""
    out, offset = [], 0
    for line_no, line in enumerate(data.splitlines(keepends=True), start=1):
        if line_no > 2 and line.strip():
            out.append((line_no, offset, json.loads(line)))
        offset += len(line)
    return out


def _comparable(tables: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Rows minus what legitimately changes with the layout of the file (line numbers, raw text)."""
    return {
        table: sorted(
            (json.dumps({k: v for k, v in r.items() if k not in ("seq", "payload_json")}, sort_keys=True))
            for r in rows
        )
        for table, rows in tables.items()
    }


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


@pytest.mark.parametrize("junk", [b'{"type":"TASK_STARTED","event":{"org', b"\x00\x01garbage", b"[1, 2]"])
def test_malformed_line_in_the_middle_is_skipped_and_named(
    jhists: list[Path], tmp_path: Path, junk: bytes
) -> None:
    # The good data around a corrupt line is kept: every other event gives the rows it gives without
    # the line, and ctx.skipped names the line and its byte offset (the ingest lands the file partial).
    src = _fixture(jhists, "linkedin-dr-elephant/history-done/job_1526555215992_0001")
    lines = src.read_bytes().splitlines(keepends=True)
    bad = len(lines) // 2
    copy = tmp_path / "bad.jhist"
    copy.write_bytes(b"".join([*lines[:bad], junk + b"\n", *lines[bad:]]))
    pristine, _, pristine_ctx = phaseline_rows(src)
    tables, cut, ctx = phaseline_rows(copy)
    assert cut is None
    assert _comparable(tables) == _comparable(pristine)
    assert ctx.events_read == pristine_ctx.events_read
    (error,) = ctx.skipped
    assert isinstance(error, TraceParseError)
    assert error.line == bad + 1
    assert error.offset == sum(len(ln) for ln in lines[:bad])
    result = ingest_paths([copy], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert f"1 unreadable record skipped (line {bad + 1})" in (result.error or "")
    assert result.rows == ingest_paths([src], Store(tmp_path / "pristine")).results[0].rows


def test_a_file_of_mostly_garbage_is_given_up(jhists: list[Path], tmp_path: Path) -> None:
    lines = _fixture(jhists, "job_1526555215992_0002").read_bytes().splitlines(keepends=True)
    copy = tmp_path / "garbage.jhist"
    copy.write_bytes(b"".join([*lines[:3], *(b"\x00 garbage %d\n" % i for i in range(101)), *lines[3:]]))
    with pytest.raises(TraceParseError, match="more than 100 unreadable records; the first: malformed") as info:
        list(read_jhist(copy, ReadContext(copy)))
    assert info.value.line == 4
    # and a file whose only events are unreadable lands nothing
    only = tmp_path / "only-garbage.jhist"
    only.write_bytes(b"".join([*lines[:2], b"\x00 garbage\n", b"[1]\n"]))
    result = ingest_paths([only], Store(tmp_path / "store")).results[0]
    assert result.status == "quarantined"


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
    src = _fixture(jhists, "job_1526555215992_0004")
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
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


# ---------------------------------------------------------------- mutations (hypothesis)
def _mutate(data: bytes, kind: str, rnd: random.Random) -> bytes:
    if kind == "truncate":
        return data[: rnd.randrange(len(data) + 1)]
    if kind == "flip":
        buf = bytearray(data)
        for _ in range(rnd.randint(1, 8)):
            buf[rnd.randrange(len(buf))] ^= 1 << rnd.randrange(8)
        return bytes(buf)
    if kind == "shuffle":
        lines = data.splitlines(keepends=True)
        rnd.shuffle(lines)
        return b"".join(lines)
    garbage = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 200)))
    return data + rnd.choice([b"", b"\n"]) + garbage


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    which=st.integers(min_value=0, max_value=9),
    kind=st.sampled_from(["truncate", "flip", "shuffle", "append"]),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
)
def test_mutations_raise_only_phaseline_errors(
    jhists: list[Path], tmp_path: Path, which: int, kind: str, seed: int
) -> None:
    src = jhists[which % len(jhists)]
    mutated = _mutate(src.read_bytes(), kind, random.Random(seed))
    path = tmp_path / "mutated.jhist"
    path.write_bytes(mutated)
    ctx = ReadContext(path)
    tables: Counter[str] = Counter()
    error: PhaselineError | None = None
    try:
        for row in read_jhist(path, ctx):
            tables[row.table] += 1
    except PhaselineError as exc:  # anything else fails the test
        error = exc
    assert set(tables) <= {"events", "counters", "jobs", "tasks", "attempts"}
    assert tables["events"] <= ctx.events_read <= mutated.count(b"\n") + 1
    if error is not None:
        assert str(path) in str(error)


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


def test_detected_as_jhist(jhists: list[Path]) -> None:
    from ingest.formats import detect

    for path in jhists:
        fmt = detect(path)
        assert fmt is not None
        assert fmt.name == "jhist", path


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
    jobs = con.execute("SELECT job_id, status, finish_ms FROM raw.jobs ORDER BY finish_ms NULLS LAST").fetchall()
    assert jobs == [
        ("job_1526555215992_0002", "SUCCEEDED", 1526555709175),
        ("job_1526555215992_0002", None, None),
    ]
    # one job, so the views hold one account of it: the complete file's
    assert con.execute("SELECT job_id, status FROM jobs").fetchall() == [("job_1526555215992_0002", "SUCCEEDED")]
    found = con.execute(
        "SELECT count(*) FROM events WHERE source_sha256 = ?", [status[src.name].sha256]
    ).fetchone()
    assert found is not None
    (n_events,) = found
    assert n_events == status[src.name].events_read == len(_raw_events(data))


def test_reduce_reopened_after_its_counters_were_written(jhists: list[Path], tmp_path: Path) -> None:
    """A finished reduce is never re-run by the AM; if a file says so anyway, the task resets and a note says why."""
    src = _fixture(jhists, "job_1526555215992_0004")
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
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
    assert re.search(r"\[jhist\] events=\d+ rows=\d+ \(attempts=\d+, counters=\d+, events=\d+, jobs=1", landed)
    assert len(landed) > 120


# ---------------------------------------------------------------- bounded memory on large files
class _SameHash(str):
    """An id whose hash collides with every other's: the packed index must still tell them apart."""

    def __hash__(self) -> int:
        return 7


def test_packed_records_are_found_by_id_through_hash_collisions() -> None:
    packed: Packed[AttemptRecord] = Packed(
        lambda a: _SameHash(a.attempt_id), attrgetter(*AttemptRecord.__slots__), lambda v: AttemptRecord(*v)
    )
    packed.pack([AttemptRecord(f"attempt_{i}", "task_1", status="SUCCEEDED", start_ms=i) for i in range(3)])
    packed.pack([AttemptRecord("attempt_9", "task_2", status="KILLED", start_ms=9)])
    assert packed.take(_SameHash("attempt_5")) is None  # same hash, no such id
    got = packed.take(_SameHash("attempt_1"))
    assert got is not None
    assert (got.attempt_id, got.start_ms) == ("attempt_1", 1)
    assert packed.take(_SameHash("attempt_1")) is None  # taken: no longer packed
    assert [(a.attempt_id, a.status) for a in packed.records()] == [
        ("attempt_0", "SUCCEEDED"), ("attempt_2", "SUCCEEDED"), ("attempt_9", "KILLED"),
    ]  # fmt: skip
    # taken, changed and packed again: found in its new chunk, and listed once
    got.status = "KILLED"
    packed.pack([got])
    assert [a.attempt_id for a in packed.records()] == ["attempt_0", "attempt_2", "attempt_9", "attempt_1"]
    again = packed.take(_SameHash("attempt_1"))
    assert again is not None
    assert again.status == "KILLED"


class _FewHashes(str):
    """Ids whose hashes fall on three values: many collisions, in every order of packing."""

    def __hash__(self) -> int:
        return int(self.rsplit("_", 1)[1]) % 3 - 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 30), max_size=8), st.lists(st.integers(0, 30), max_size=4)),
                max_size=12))  # fmt: skip
def test_packed_records_behave_as_the_dict_they_stand_for(steps: list[tuple[list[int], list[int]]]) -> None:
    """Chunks packed one after another (the index merged, not sorted again), ids taken between: every
    take finds what a dict would, and the records left come back in the order they were packed."""
    packed: Packed[AttemptRecord] = Packed(
        lambda a: _FewHashes(a.attempt_id), attrgetter(*AttemptRecord.__slots__), lambda v: AttemptRecord(*v)
    )
    model: dict[str, int] = {}  # packed id -> start_ms, in packing order
    for step, (to_pack, to_take) in enumerate(steps):
        fresh = [f"attempt_{i}" for i in dict.fromkeys(to_pack) if f"attempt_{i}" not in model]
        packed.pack([AttemptRecord(a, "task_1", status="SUCCEEDED", start_ms=step) for a in fresh])
        model.update((a, step) for a in fresh)
        for i in to_take:
            got = packed.take(_FewHashes(f"attempt_{i}"))
            expected = model.pop(f"attempt_{i}", None)
            assert (None if got is None else got.start_ms) == expected
    assert [(a.attempt_id, a.start_ms) for a in packed.records()] == list(model.items())


def test_event_blocks_are_bounded_in_bytes(fixtures_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # events that carry counters run to kilobytes: a block leaves once its text passes the bound
    monkeypatch.setattr(jhist_module, "_EVENT_BLOCK_BYTES", 20_000)
    path = max(sorted(fixtures_dir.rglob("*.jhist")), key=lambda p: p.stat().st_size)
    sizes: list[tuple[int, int]] = []
    rows = 0
    for item in read_jhist(path, ReadContext(path)):
        if isinstance(item, RowBlock) and item.table == "events":
            payloads = item.columns["payload_json"]
            sizes.append((item.n, sum(map(len, payloads))))
            rows += item.n
    longest = max(len(line) for line in path.read_bytes().splitlines())
    assert len(sizes) > 2
    assert all(text < 20_000 + longest for _, text in sizes)
    assert rows == sum(1 for line in path.read_bytes().splitlines()[2:] if line.strip())


def test_an_event_with_an_unreadable_field_is_skipped_and_named(jhists: list[Path], tmp_path: Path) -> None:
    # a flipped byte in a well-formed event: finishTime is no integer; the event is skipped, named, and
    # every other event lands (the task it would have finished stays unfinished)
    src = _fixture(jhists, "linkedin-dr-elephant/history-done/job_1526555215992_0001")
    lines = src.read_bytes().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if b'"type":"TASK_FINISHED"' in ln)
    task_id = json.loads(lines[at])["event"]["org.apache.hadoop.mapreduce.jobhistory.TaskFinished"]["taskid"]
    bad = re.sub(rb'"finishTime":\d+', b'"finishTime":"soon"', lines[at], count=1)
    assert bad != lines[at]
    copy = tmp_path / "bad-field.jhist"
    copy.write_bytes(b"".join([*lines[:at], bad, *lines[at + 1 :]]))
    pristine, _, pristine_ctx = phaseline_rows(src)
    tables, cut, ctx = phaseline_rows(copy)
    assert cut is None
    (error,) = ctx.skipped
    assert error.line == at + 1
    assert "TASK_FINISHED" in error.message
    assert "finishTime" in error.message
    assert ctx.events_read == pristine_ctx.events_read - 1
    assert len(tables["events"]) == len(pristine["events"]) - 1
    assert [t["task_id"] for t in tables["tasks"]] == [t["task_id"] for t in pristine["tasks"]]
    (task,) = [t for t in tables["tasks"] if t["task_id"] == task_id]
    assert task["finish_ms"] is None
    assert _comparable({"attempts": tables["attempts"]}) == _comparable({"attempts": pristine["attempts"]})
    result = ingest_paths([copy], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert f"1 unreadable record skipped (line {at + 1})" in (result.error or "")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b'"submitTime":1526555642677', b'"submitTime":"\xc2\xb2"', "submitTime is str '\u00b2', expected a 64-bit integer"),
        (b'"value":117831', b'"value":18446744073709551615', "value is 18446744073709551615, past a 64-bit integer"),
        (b'"finishTime":1526555653236', b'"finishTime":1e300', "finishTime is 1e+300, past a 64-bit integer"),
        # an integer literal past what orjson reads as one comes as a float: named as the number it is
        (b'"finishTime":1526555653236', b'"finishTime":100000000000000000000000', "finishTime is 1e+23, past a 64-bit"),
    ],
)
def test_a_number_no_64_bit_column_holds_skips_its_event(
    jhists: list[Path], tmp_path: Path, old: bytes, new: bytes, message: str
) -> None:
    # A superscript digit passed str.isdigit() and int() refused it; a counter of 2**64 - 1 (orjson reads
    # up to there) overflowed the task counters' array; a time of 1e300 failed the events schema.  Each
    # escaped the reader, or failed the write, losing the file: now the event is skipped and named.
    src = _fixture(jhists, "linkedin-dr-elephant/history-done/job_1526555215992_0001")
    data = src.read_bytes()
    assert old in data
    path = tmp_path / "bad.jhist"
    path.write_bytes(data.replace(old, new, 1))
    ctx = ReadContext(path)
    list(read_jhist(path, ctx))
    (error,) = ctx.skipped
    assert message in error.message
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"


@pytest.mark.parametrize("damage", ["field name a list", "not JSON", "no record schema"])
def test_a_writer_schema_no_reader_can_use_is_named_and_the_events_read_without_it(
    jhists: list[Path], tmp_path: Path, damage: str
) -> None:
    # A TypeError had escaped the reader (a field name that is a list), or the file was quarantined
    # (line 2 not JSON, or no record schema): every event is still there to read.
    src = _fixture(jhists, "job_1526555215992_0002")
    lines = src.read_bytes().splitlines(keepends=True)
    schema = json.loads(lines[1])
    if damage == "field name a list":
        schema["fields"].append({"name": ["x"], "type": "string"})
        line2 = json.dumps(schema).encode() + b"\n"
    elif damage == "not JSON":
        line2 = lines[1][: len(lines[1]) // 2] + b"\x00\n"
    else:
        line2 = b'{"type": "enum"}\n'
    path = tmp_path / "bad.jhist"
    path.write_bytes(b"".join([lines[0], line2, *lines[2:]]))
    tables, cut, ctx = phaseline_rows(path)
    pristine, _, _ = phaseline_rows(src)
    assert cut is None
    assert _comparable(tables) == _comparable(pristine)
    (error,) = ctx.skipped
    assert error.line == 2
    assert "the writer's schema is unusable" in error.message
    assert ingest_paths([path], Store(tmp_path / "store")).results[0].status == "partial"


def _payload(event: dict[str, Any]) -> dict[str, Any]:
    return next(iter(event["event"].values()))  # type: ignore[no-any-return]


def test_a_job_finished_written_again_replaces_the_job_counters(jhists: list[Path], tmp_path: Path) -> None:
    # Every JOB_FINISHED had added its job counters: the job's totals twice, each sum doubled
    # (Hadoop's parser keeps the last one's)
    src = _fixture(jhists, "job_1526555215992_0004")
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
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
    totals = [(c["group_name"], c["counter_name"], c["value"]) for c in tables["counters"] if c["scope"] == "job_total"]
    expected = [(c["group_name"], c["counter_name"], c["value"] + 100 * (c["counter_name"] == first["name"]))
                for c in pristine["counters"] if c["scope"] == "job_total"]  # fmt: skip
    assert sorted(totals) == sorted(expected)
    assert tables["jobs"][0]["finish_ms"] == payload["finishTime"]


def test_a_task_failed_without_counters_leaves_a_rerun_its_counters(jhists: list[Path], tmp_path: Path) -> None:
    # A reduce whose first attempt failed and whose TASK_FAILED (counters null) came before its re-run:
    # the null had marked the task's counters written, and the re-run's TASK_FINISHED then left none
    src = _fixture(jhists, "job_1526555215992_0004")
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    events = _raw_events(src.read_bytes())
    (at,) = [n for n, _, e in events if e["type"] == "REDUCE_ATTEMPT_STARTED"]
    started = json.loads(lines[at - 1])
    task_id = _payload(started)["taskid"]
    failed_task = {"type": "TASK_FAILED", "event": {"org.apache.hadoop.mapreduce.jobhistory.TaskFailed": {
        "taskid": task_id, "taskType": "REDUCE", "finishTime": _payload(started)["startTime"], "error": "boom",
        "failedDueToAttempt": None, "status": "FAILED", "counters": None}}}  # fmt: skip
    copy = tmp_path / "rerun.jhist"
    copy.write_text("".join([*lines[: at - 1], json.dumps(failed_task) + "\n", *lines[at - 1:]]))
    tables, _, ctx = phaseline_rows(copy)
    pristine, _, _ = phaseline_rows(src)

    def task_counters(of: dict[str, list[dict[str, Any]]]) -> list[tuple[str, int]]:
        return sorted((c["counter_name"], c["value"]) for c in of["counters"]
                      if c["scope"] == "task" and c["task_id"] == task_id)  # fmt: skip

    assert task_counters(tables) == task_counters(pristine) != []
    assert not any("finished twice" in n for n in ctx.notes)


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


def test_without_a_schema_type_wrapped_counters_of_failed_attempts_are_read(jhists: list[Path], tmp_path: Path) -> None:
    # Hadoop 2.7+ writes a failed attempt's counters as a ["null", "JhCounters"] union, type-wrapped.
    # With line 2 unusable, the reader knew no union, and skipped every such attempt
    src = _fixture(jhists, "job_1526555215992_0004")
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
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
    body = [*lines[2: at - 1], json.dumps(started) + "\n", json.dumps(failed) + "\n", *lines[at - 1:]]
    for schema_line in (lines[1], '{"type": "record", "name": \n'):  # the writer's schema, then a damaged one
        copy = tmp_path / "wrapped.jhist"
        copy.write_text("".join([lines[0], schema_line, *body]))
        tables, _, ctx = phaseline_rows(copy)
        assert [s.message for s in ctx.skipped if "REDUCE_ATTEMPT_FAILED" in s.message] == []
        (attempt,) = [a for a in tables["attempts"] if a["attempt_id"] == done["attemptId"][:-1] + "7"]
        assert attempt["status"] == "FAILED"
        assert [c for c in tables["counters"] if c["attempt_id"] == attempt["attempt_id"]]
