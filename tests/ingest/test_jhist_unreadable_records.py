"""The .jhist reader on corrupt copies: unreadable lines, fields and schemas skipped and named; mutations."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle_util import phaseline_rows

from ingest.base import ReadContext
from ingest.jhist import read_jhist
from ingest.pipeline import ingest_paths
from phaseline.errors import PhaselineError, TraceParseError
from phaseline.store import Store
from tests.ingest.jhist_helpers import _comparable, _fixture


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
    with pytest.raises(
        TraceParseError, match="more than 100 unreadable records; the first: malformed"
    ) as info:
        list(read_jhist(copy, ReadContext(copy)))
    assert info.value.line == 4
    # and a file whose only events are unreadable lands nothing
    only = tmp_path / "only-garbage.jhist"
    only.write_bytes(b"".join([*lines[:2], b"\x00 garbage\n", b"[1]\n"]))
    result = ingest_paths([only], Store(tmp_path / "store")).results[0]
    assert result.status == "quarantined"


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
        (
            b'"submitTime":1526555642677',
            b'"submitTime":"\xc2\xb2"',
            "submitTime is str '\u00b2', expected a 64-bit integer",
        ),
        (
            b'"value":117831',
            b'"value":18446744073709551615',
            "value is 18446744073709551615, past a 64-bit integer",
        ),
        (b'"finishTime":1526555653236', b'"finishTime":1e300', "finishTime is 1e+300, past a 64-bit integer"),
        # an integer literal past what orjson reads as one comes as a float: named as the number it is
        (
            b'"finishTime":1526555653236',
            b'"finishTime":100000000000000000000000',
            "finishTime is 1e+23, past a 64-bit",
        ),
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
