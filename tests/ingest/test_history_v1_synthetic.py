"""Hadoop 0.20/1.x text history on hand-written records: escapes, counters, cuts, bad lines, doubled records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from reader_checks import table

from ingest.base import ReadContext, Row
from ingest.counters_v1 import parse_counters
from ingest.history_v1 import MAX_RECORD_LINES, read_history_v1
from ingest.pipeline import ingest_paths
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.store import Store
from tests.ingest.history_v1_helpers import RUMEN_TEST, read


def test_counter_parser_two_layers_and_trailing_space() -> None:
    text = (
        "{(org.apache.hadoop.mapred.JobInProgress$Counter)(Job Counters )"
        "[(FALLOW_SLOTS_MILLIS_MAPS)(Total time spent by all maps waiting after reserving slots \\(ms\\))(0)]"
        "[(TOTAL_LAUNCHED_MAPS)(Launched map tasks)(3)]}{(g)(G)[(a\\[1\\])(A)(-5)]}"
    )
    got = list(parse_counters(text, Path("x"), 7))
    assert got[0][1] == "Job Counters "
    assert got[0][3] == "Total time spent by all maps waiting after reserving slots (ms)"
    assert got[1][2:] == ("TOTAL_LAUNCHED_MAPS", "Launched map tasks", 3)
    assert got[2][2:] == ("a[1]", "A", -5)
    with pytest.raises(TraceParseError, match=r"x:7: COUNTERS: malformed counters"):
        list(parse_counters("{(g)(G)[(a)(A)(1)]", Path("x"), 7))


HEAD = 'Meta VERSION="1" .\nJob JOBID="job_1_0001" JOBNAME="a\\.b \\"q\\" x\\=y c\\\\d" USER="u" SUBMIT_TIME="10" .\n'


def write(tmp_path: Path, text: str, name: str = "h.log") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_escapes_and_multiline_values(tmp_path: Path) -> None:
    text = HEAD + (
        'Task TASKID="task_1_0001_m_000000" TASK_TYPE="MAP" START_TIME="11" SPLITS="" .\n'
        'MapAttempt TASK_TYPE="MAP" TASKID="task_1_0001_m_000000" TASK_ATTEMPT_ID="attempt_1_0001_m_000000_0" '
        'TASK_STATUS="FAILED" FINISH_TIME="20" HOSTNAME="h" ERROR="line one\\.\n  line \\" .\nlast" .\n'
    )
    rows = read(write(tmp_path, text))
    (job,) = table(rows, "jobs")
    assert job["name"] == 'a.b "q" x=y c\\d'
    (attempt,) = table(rows, "attempts")
    assert attempt["error"] == 'line one.\n  line " .\nlast'
    assert attempt["task_id"] == "task_1_0001_m_000000"
    assert attempt["status"] == "FAILED"


def test_unknown_record_type_lands_in_events(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + 'JobPriorityChange JOBID="job_1_0001" PRIORITY="HIGH" .\n')
    ctx = ReadContext(path)
    rows = list(read_history_v1(path, ctx))
    assert ctx.unknown["JobPriorityChange"] == 1
    assert [e["event_type"] for e in table(rows, "events")] == ["Meta", "Job", "JobPriorityChange"]


def test_cut_inside_a_value_is_truncation(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + 'Task TASKID="task_1_0001_m_000000" ERROR="oops\nstill going')
    ctx = ReadContext(path)
    got: list[Row] = []
    with pytest.raises(TraceTruncatedError, match=r"h\.log:3: file ends inside a record"):
        got.extend(read_history_v1(path, ctx))
    assert [j["job_id"] for j in table(got, "jobs")] == ["job_1_0001"]


def test_a_record_that_never_ends_is_refused_without_buffering_the_file(tmp_path: Path) -> None:
    path = write(
        tmp_path, HEAD + 'Task TASKID="task_1_0001_m_000000" ERROR="\n' + "x\n" * (MAX_RECORD_LINES + 5)
    )
    with pytest.raises(TraceParseError, match=r"h\.log:3: the record starting at line 3 runs past"):
        read(path)


def test_record_cut_by_the_next_file_is_kept_raw(tmp_path: Path) -> None:
    second = HEAD.replace("job_1_0001", "job_1_0002")
    text = (
        "\f!!FILE=a!!\n"
        + HEAD
        + 'Task TASKID="task_1_0001_m_000000" ERROR="cut\n'
        + "\f!!FILE=b!!\n"
        + second
    )
    path = write(tmp_path, text)
    ctx = ReadContext(path)
    rows = list(read_history_v1(path, ctx))
    assert sorted(j["job_id"] for j in table(rows, "jobs")) == ["job_1_0001", "job_1_0002"]
    cut = [json.loads(e["payload_json"]) for e in table(rows, "events") if e["event_type"] == "CutRecord"]
    assert cut == [{"line": 4, "file": "a", "raw": 'Task TASKID="task_1_0001_m_000000" ERROR="cut'}]
    assert ctx.unknown["cut record"] == 1


@pytest.mark.parametrize(
    ("bad", "line", "what"),
    [
        ("#!? this is not a record .\n", 3, "not a history record"),
        ("just some words\n", 3, "does not end in ' .' outside a quoted value"),
        ("Task garbage without pairs .\n", 3, "without any KEY"),
        (
            'Task TASKID="task_1_0001_m_000001" START_TIME="soon" .\n',
            3,
            "START_TIME = 'soon' is not an integer",
        ),
        ('MapAttempt TASKID="task_1_0001_m_000001" START_TIME="1" .\n', 3, "without TASK_ATTEMPT_ID"),
        (
            'Task START_TIME="99999999999999999999" TASKID="task_1_0001_m_000001" .\n',
            3,
            "does not fit in 64 bits",
        ),
        # int() reads '1_240' as 1240; Hadoop's Long.parseLong refuses it
        (
            'Task TASKID="task_1_0001_m_000001" START_TIME="1_240" .\n',
            3,
            "START_TIME = '1_240' is not an integer",
        ),
        # a stray quote: the record still ends at its '" .' (it had swallowed every later line)
        ('Task TASKID="task_1_0001_m_000001" TASK_TYPE="MA"P" .\n', 3, "holds an unescaped quote"),
        ('Task TASKID="task_1_0001_m_000001" ERROR="two\nlines" TASK_TYPE="MA"P" .\n', 3, "lines 3-4 holds"),
    ],
)
def test_a_line_that_is_no_record_is_skipped_and_named(
    tmp_path: Path, bad: str, line: int, what: str
) -> None:
    # the good records around it are kept: the rows are those of the file without the line
    tail = 'Task TASKID="task_1_0001_m_000000" TASK_TYPE="MAP" START_TIME="20" .\n'
    good = write(tmp_path, HEAD + tail, "good.log")
    path = write(tmp_path, HEAD + bad + tail)
    ctx, good_ctx = ReadContext(path), ReadContext(good)
    rows = list(read_history_v1(path, ctx))
    good_rows = list(read_history_v1(good, good_ctx))

    def comparable(rs: list[Any]) -> list[dict[str, Any]]:  # without what the layout moves: lines, file name
        return [{k: v for k, v in r.as_dict().items() if k not in ("seq", "payload_json")} for r in rs]

    assert comparable(rows) == comparable(good_rows)
    assert len(rows) > 2
    assert ctx.events_read == good_ctx.events_read
    (error,) = ctx.skipped
    assert error.line == line
    assert what in error.message
    assert str(path) in str(error)


def test_a_record_written_twice_counts_its_counters_once(tmp_path: Path) -> None:
    # a repeated attempt record replaces the counters it had (Hadoop keeps one map of values per
    # attempt); they had been added again, doubling every sum
    attempt = (
        'MapAttempt TASK_TYPE="MAP" TASKID="task_1_0001_m_000000" TASK_ATTEMPT_ID="attempt_1_0001_m_000000_0" '
        'TASK_STATUS="SUCCESS" FINISH_TIME="20" COUNTERS="{(FileSystemCounters)(FileSystemCounters)'
        '[(HDFS_BYTES_READ)(HDFS_BYTES_READ)(@)]}" .\n'
    )
    rows = read(write(tmp_path, HEAD + attempt.replace("@", "5") * 2 + attempt.replace("@", "7")))
    assert [(c["counter_name"], c["value"]) for c in table(rows, "counters")] == [("HDFS_BYTES_READ", 7)]
    assert len(table(rows, "attempts")) == 1


def test_a_long_word_that_is_no_pair_reads_in_linear_time(tmp_path: Path) -> None:
    # the pair pattern tried every start inside a run of word characters (quadratic: a 100 kB word
    # took a minute, 300 kB passed the per-file time limit and the file was quarantined); the limit
    # here is generous, so only a read that had gone quadratic misses it
    path = write(tmp_path, HEAD + "Task " + "A" * 400_000 + " .\n" + 'Task TASKID="task_1_0001_m_000000" .\n')
    summary = ingest_paths([path], Store(tmp_path / "store"), file_timeout_s=60)
    (result,) = summary.results
    assert result.status == "partial"
    assert "without any KEY" in str(result.error)


def test_a_record_whose_counters_break_off_keeps_its_fields(tmp_path: Path) -> None:
    # the record's fields land (the task is known); its counters text, which breaks off, is named as skipped
    path = write(tmp_path, HEAD + 'Task TASKID="task_1_0001_m_000000" COUNTERS="{(g)(G)[(c)(C)(1)" .\n')
    ctx = ReadContext(path)
    rows = list(read_history_v1(path, ctx))
    (error,) = ctx.skipped
    assert error.line == 3
    assert "malformed counters" in error.message
    assert [r.as_dict()["task_id"] for r in rows if r.table == "tasks"] == ["task_1_0001_m_000000"]
    assert not [r for r in rows if r.table == "counters"]


def test_lands_whole_or_partial_in_the_store(fixtures_dir: Path, tmp_path: Path, store_dir: Path) -> None:
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    cut = write(tmp_path, HEAD + 'Task TASKID="task_1_0001_m_000000" ERROR="oops\nstill going', "cut.log")
    store = Store(store_dir)
    summary = ingest_paths([fixtures_dir / RUMEN_TEST / "sample-job-tracker-logs.gz", cut], store)
    assert [r.status for r in summary.results] == ["landed", "partial"]
    con = store.connect()
    assert con.execute("select count(*) from jobs").fetchone() == (5,)
    assert con.execute("select count(*) from attempts where status = 'KILLED'").fetchone() == (69,)
    found = con.execute("select error from sources where status = 'partial'").fetchone()
    assert found is not None
    assert "cut.log:3" in found[0]
