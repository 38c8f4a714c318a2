"""TeraValidate's real output in the 3.x and 2.x layouts: damaged headers, doubled output, parts, local time."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
from pathlib import Path

import pytest

from ingest.base import ReadContext, Row
from ingest.pipeline import ingest_paths
from phaseline.store import Store
from tests.ingest.yarn_logs_helpers import FOLDER, TERAVALIDATE, _rows_and_ctx

# TeraValidate's containers: the AM, its one map and its one reduce (their launch scripts say which)
AM, MAP = "container_1756057717712_0003_01_000001", "container_1756057717712_0003_01_000002"
_FRAME = re.compile(
    rb"Container: (\S+) on (\S+)\nLogAggregationType: \w+\n=+\nLogType:(.*)\n"
    rb"LogLastModifiedTime:.*\nLogLength:(\d+)\nLogContents:\n"
)


def _teravalidate(fixtures_dir: Path, layout: str) -> str:
    """TeraValidate's real output, as written (3.x: a header per file) or in Hadoop 2.x's layout.

    2.x writes each container's header once, above its files, and no end lines: the
    files are rebuilt from the real ones, byte for byte.
    """
    with gzip.open(fixtures_dir / FOLDER / TERAVALIDATE, "rb") as fh:
        raw = fh.read()
    if layout == "3.x":
        return raw.decode()
    out, last = [], b""
    for frame in _FRAME.finditer(raw):
        container, host, log_type, length = frame.groups()
        if container != last:
            out.append(b"\nContainer: %s on %s\n%s\n" % (container, host, b"=" * 40))
            last = container
        body = raw[frame.end() : frame.end() + int(length)]
        out.append(
            b"LogType:%s\nLog Upload Time:Sun Aug 24 18:02:00 +0000 2025\nLogLength:%s\nLog Contents:\n%s\n"
            % (log_type, length, body)
        )
    assert len(out) == raw.count(b"\nEnd of LogType:") + 3
    return b"".join(out).decode().lstrip("\n")


def _read_text(tmp_path: Path, text: str) -> tuple[list[Row], ReadContext]:
    path = tmp_path / "app.txt"
    path.write_text(text)
    return _rows_and_ctx(path)


def _container_logs(rows: list[Row]) -> set[tuple[str, str, int]]:
    logs = [
        json.loads(str(r.values["payload_json"]))
        for r in rows
        if r.table == "events" and r.values["event_type"] == "container_log"
    ]
    return {(log["container_id"], log["log_type"], log["chars"]) for log in logs}


def _tables(rows: list[Row], *tables: str) -> list[Row]:
    return [r for r in rows if r.table in tables]


@pytest.mark.parametrize("layout", ["3.x", "2.x"])
def test_a_file_whose_logtype_line_is_damaged_is_named_not_read_as_the_file_before(
    fixtures_dir: Path, tmp_path: Path, layout: str
) -> None:
    # The map's 'LogType:syslog' line damaged: its syslog had been read as the file before it
    # (its stdout, 0 bytes), so the map attempt vanished without a word
    text = _teravalidate(fixtures_dir, layout)
    pristine, _ = _read_text(tmp_path, text)
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line == "LogType:syslog")
    lines[at] = "LogTyp:syslog"
    rows, ctx = _read_text(tmp_path, "\n".join(lines))
    contents = next(i for i in range(at, len(lines)) if lines[i] in ("LogContents:", "Log Contents:")) + 1
    (error,) = ctx.skipped
    assert error.line == contents
    assert f"(lines {contents}-" in error.message
    assert "readable 'LogType:' line" in error.message
    assert _container_logs(rows) == _container_logs(pristine)  # the map's stdout is its own empty one
    assert {r.values["attempt_id"] for r in _tables(rows, "attempts")} == {
        r.values["attempt_id"] for r in _tables(pristine, "attempts")
    } - {"attempt_1756057717712_0003_m_000000_0"}
    reduce = [r for r in pristine if r.values.get("task_id") == "task_1756057717712_0003_r_000000"]
    assert [r for r in rows if r.values.get("task_id") == "task_1756057717712_0003_r_000000"] == reduce
    assert _tables(rows, "jobs") == _tables(pristine, "jobs")


def test_a_container_whose_only_header_is_damaged_is_named_not_merged_into_the_one_before(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    # Hadoop 2.x heads each container once: with the AM's header damaged, its files had joined
    # the map's container, which was then read as the AM (the map attempt gone, nothing named)
    text = _teravalidate(fixtures_dir, "2.x")
    pristine, _ = _read_text(tmp_path, text)
    damaged = text.replace(f"Container: {AM} on", f"Containr: {AM} on")
    assert damaged.count("Containr:") == 1
    rows, ctx = _read_text(tmp_path, damaged)
    lines = damaged.split("\n")
    header = lines.index(f"Containr: {AM} on hadoopnode_34573")
    next_header = next(i for i in range(header, len(lines)) if lines[i].startswith("Container: "))
    am_files = [i + 1 for i in range(header, next_header) if lines[i] == "Log Contents:"]
    assert len(am_files) == 7
    assert [e.line for e in ctx.skipped] == am_files
    assert all("readable 'Container:' line" in e.message for e in ctx.skipped)
    for table in ("attempts", "tasks", "counters", "attempt_events", "attempt_phases"):
        assert _tables(rows, table) == _tables(pristine, table), table
    assert _container_logs(rows) == {log for log in _container_logs(pristine) if log[0] != AM}
    assert not [r for r in rows if r.table == "events" and r.values["event_type"] == "am_log"]


@pytest.mark.parametrize("damage", ["header", "header and rule"])
def test_a_file_whose_own_header_is_damaged_is_named_not_given_to_the_container_before(
    fixtures_dir: Path, tmp_path: Path, damage: str
) -> None:
    # 2.9+/3.x head each file: the AM's first file (directory.info) had been given to the map
    text = _teravalidate(fixtures_dir, "3.x")
    pristine, _ = _read_text(tmp_path, text)
    lines = text.split("\n")
    at = lines.index(f"Container: {AM} on hadoopnode_34573")
    assert lines[at + 3] == "LogType:directory.info"
    lines[at] = lines[at].replace("Container:", "Containr:")
    if damage == "header and rule":
        lines[at + 2] = "=" * 5
    rows, ctx = _read_text(tmp_path, "\n".join(lines))
    (error,) = ctx.skipped
    assert error.line == at + 7  # its 'LogContents:' line
    assert "readable 'Container:' line" in error.message
    assert _container_logs(rows) == _container_logs(pristine) - {
        log for log in _container_logs(pristine) if log[:2] == (AM, "directory.info")
    }
    assert _tables(rows, "attempts", "counters", "jobs") == _tables(pristine, "attempts", "counters", "jobs")


def test_a_damaged_first_file_is_named_and_every_file_after_it_read(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    # The first file's 'LogType:' line damaged had raised 'log contents before any header': nothing landed
    text = _teravalidate(fixtures_dir, "3.x")
    pristine, _ = _read_text(tmp_path, text)
    rows, ctx = _read_text(tmp_path, text.replace("LogType:directory.info", "LogType directory.info", 1))
    (error,) = ctx.skipped
    assert error.line == 7
    assert _container_logs(rows) == _container_logs(pristine) - {(MAP, "directory.info", 1936)}
    assert _tables(rows, "attempts", "counters", "jobs") == _tables(pristine, "attempts", "counters", "jobs")


@pytest.mark.parametrize("layout", ["3.x", "2.x"])
def test_output_written_twice_is_read_once_and_noted(fixtures_dir: Path, tmp_path: Path, layout: str) -> None:
    # `cat out.txt out.txt`: every attempt had landed twice (126 counter rows for 63, bytes read doubled)
    text = _teravalidate(fixtures_dir, layout)
    once, _ = _read_text(tmp_path, text)
    rows, ctx = _read_text(tmp_path, text + text)
    assert rows == once
    assert ctx.skipped == []
    containers = sorted({r.values["container_id"] for r in _tables(once, "attempts")} | {AM})
    assert len(ctx.notes) == 3
    for container, note in zip(containers, sorted(ctx.notes), strict=True):
        assert note.startswith(f"{container}'s directory.info, launch_container.sh, ")
        assert "read once" in note
    result = ingest_paths([tmp_path / "app.txt"], Store(tmp_path / "store")).results[0]
    assert result.status == "landed"


def test_a_log_uploaded_in_parts_is_read_whole(fixtures_dir: Path, tmp_path: Path) -> None:
    # Rolling log aggregation uploads a container's syslog in parts, each a file of the same name:
    # a part is no copy (its text differs), and every part is read, as one syslog
    text = _teravalidate(fixtures_dir, "3.x")
    once, _ = _read_text(tmp_path, text)
    head = f"Container: {MAP} on "
    start = text.index("LogType:syslog\n", text.index(head))
    frame_top = text.rindex(head, 0, start)
    contents = text.index("LogContents:\n", start) + len("LogContents:\n")
    end = text.index("End of LogType:syslog\n", contents)
    lines = text[contents:end].splitlines(keepends=True)
    half = len(lines) // 2
    frame = text[frame_top:start]

    def part(body: list[str]) -> str:
        size = len("".join(body).encode())
        return (
            f"{frame}LogType:syslog\nLogLastModifiedTime:Sun Aug 24 18:01:20 +0000 2025\nLogLength:{size}\n"
            f"LogContents:\n{''.join(body)}End of LogType:syslog\n"
        )

    rows, ctx = _read_text(tmp_path, text[:frame_top] + part(lines[:half]) + part(lines[half:])
                           + text[end + len("End of LogType:syslog\n"):])  # fmt: skip
    assert ctx.skipped == []
    assert ctx.notes == []
    assert _tables(rows, "attempts", "counters", "jobs") == _tables(once, "attempts", "counters", "jobs")

    def timed(of: list[Row]) -> list[dict[str, object]]:  # (the second part's lines moved down by its header)
        return [{k: v for k, v in r.values.items() if k != "line_no"}
                for r in _tables(of, "attempt_phases", "attempt_events")]  # fmt: skip

    assert timed(rows)
    assert timed(rows) == timed(once)


@pytest.mark.parametrize(("hours", "minutes"), [(-7, 0), (5, 30)])
def test_logs_in_local_time_are_moved_to_utc(
    fixtures_dir: Path, tmp_path: Path, hours: int, minutes: int
) -> None:
    # log4j writes local time without a zone; the done name's times are epoch.  The output of a
    # cluster logging in UTC-7 had put every attempt 7 h before the job it ran in.
    text = _teravalidate(fixtures_dir, "3.x")
    once, _ = _read_text(tmp_path, text)
    shift = dt.timedelta(hours=hours, minutes=minutes if hours >= 0 else -minutes)

    def local(m: re.Match[str]) -> str:
        t = dt.datetime.strptime(m.group(0), "%Y-%m-%d %H:%M:%S,%f") + shift
        return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"

    rows, ctx = _read_text(tmp_path, re.sub(r"(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}", local, text))
    assert rows == once
    sign = "-" if hours < 0 else "+"
    assert any(f"UTC{sign}{abs(hours):02d}:{minutes:02d}" in n for n in ctx.notes)
