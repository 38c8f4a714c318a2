"""Hadoop 0.20/1.x text history: golden tests on real logs, Rumen's own parse as oracle, bad input."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reader_checks import mutations, read_checked, read_reconciled, rows_of, table

from ingest.base import ReadContext, Row, RowBlock, read_head
from ingest.counters_v1 import parse_counters
from ingest.formats import detect
from ingest.history_v1 import FORMATS, MAX_RECORD_LINES, read_history_v1, sniff_history_v1
from ingest.mrcommon import unescape_v1
from ingest.pipeline import ingest_paths
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.hadoop_names import split_rack_host
from phaseline.store import Store

RUMEN_TEST = "apache-hadoop-mapreduce/rumen-small-trace-test"
ORACLE_PAIRS = [
    ("sample-job-tracker-logs.gz", "job-tracker-logs-trace-output.gz"),
    ("truncated-job-tracker-log", "truncated-trace-output"),
]


def read(path: Path) -> list[Row]:
    return rows_of(read_history_v1, path)


def v1_files(fixtures: Path) -> list[Path]:
    return sorted(p for p in fixtures.rglob("*") if p.is_file() and sniff_history_v1(read_head(p), p))


def rumen_objects(path: Path) -> Iterator[dict[str, Any]]:
    """Rumen's trace output, decoded independently of phaseline's Rumen reader."""
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()
    decoder, pos = json.JSONDecoder(), 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return
        obj, pos = decoder.raw_decode(text, pos)
        yield obj


# -- golden: real files ------------------------------------------------------


def test_every_v1_fixture_parses(fixtures_dir: Path) -> None:
    files = v1_files(fixtures_dir)
    names = {p.name for p in files}
    assert {"sample-job-tracker-logs.gz", "truncated-job-tracker-log", "JobHistory.log"} <= names
    assert len(files) == 7
    (fmt,) = FORMATS
    for path in files:
        rows, _ = read_reconciled(fmt, path)  # every record read is kept once in the record tables
        assert table(rows, "jobs"), path


def test_detected_from_content_not_name(fixtures_dir: Path, tmp_path: Path) -> None:
    src = fixtures_dir / RUMEN_TEST / "v20-single-input-log.gz"
    renamed = tmp_path / "something.json"
    renamed.write_bytes(src.read_bytes())
    fmt = detect(renamed)
    assert fmt is not None
    assert fmt.name == "history_v1"


def test_concatenated_yahoo_jobs(fixtures_dir: Path) -> None:
    rows = read(fixtures_dir / RUMEN_TEST / "sample-job-tracker-logs.gz")
    jobs = {j["job_id"]: j for j in table(rows, "jobs")}
    assert sorted(jobs) == [f"job_200904211745_000{i}" for i in range(1, 5)]
    big = jobs["job_200904211745_0004"]
    assert (big["total_maps"], big["total_reduces"], big["status"]) == (131, 47, "SUCCEEDED")
    attempts = [a for a in table(rows, "attempts") if a["job_id"] == big["job_id"]]
    statuses = Counter((a["task_type"], a["status"]) for a in attempts)
    assert statuses[("MAP", "KILLED")] + statuses[("REDUCE", "KILLED")] == 69
    assert statuses[("MAP", "SUCCEEDED")] == 131
    assert statuses[("REDUCE", "SUCCEEDED")] == 47
    tasks = [t for t in table(rows, "tasks") if t["job_id"] == big["job_id"]]
    assert Counter(t["task_type"] for t in tasks) == {"MAP": 131, "REDUCE": 47, "SETUP": 1, "CLEANUP": 1}
    assert all(t["successful_attempt_id"] for t in tasks)
    # each !!FILE= conf section lands in conf, under the job named in its file name
    conf = {c["job_id"]: c["value"] for c in table(rows, "conf")}
    assert conf["job_200904211745_0004"] == "-Xmx768m"
    assert len(conf) == 4


def test_killed_job_without_counters(fixtures_dir: Path) -> None:
    rows = read(fixtures_dir / RUMEN_TEST / "sample-job-tracker-logs.gz")
    job = next(j for j in table(rows, "jobs") if j["job_id"] == "job_200904211745_0001")
    assert job["status"] == "KILLED"
    assert job["finish_ms"] == 1240336760540
    job_counters = [
        c for c in table(rows, "counters") if c["job_id"] == job["job_id"] and c["scope"] != "task"
    ]
    assert all(c["scope"] == "attempt" for c in job_counters)


def test_multiline_error_and_raw_status_kept(fixtures_dir: Path) -> None:
    rows = read(fixtures_dir / RUMEN_TEST / "sample-job-tracker-logs.gz")
    failed = next(
        a for a in table(rows, "attempts") if a["attempt_id"] == "attempt_200904211745_0002_m_000002_0"
    )
    assert failed["status"] == "FAILED"
    assert failed["error"].startswith(
        "java.io.IOException: Task process exit with nonzero status of 15.\n\tat "
    )
    assert (failed["host"], failed["rack"]) == ("cluster1670.secondleveldomain.com", None)
    ok = next(
        a for a in table(rows, "attempts") if a["attempt_id"] == "attempt_200904211745_0001_m_000001_0"
    )
    assert (ok["host"], ok["rack"]) == ("cluster1020.secondleveldomain.com", "/192.30.63.192")
    assert ok["map_finish_ms"] is None  # 1.x never records it
    raw = [json.loads(e["payload_json"]) for e in table(rows, "events")]
    assert any(p.get("fields", {}).get("TASK_STATUS") == "SUCCESS" for p in raw)  # raw status kept in events


def test_counter_escapes_and_legacy_group_names(fixtures_dir: Path) -> None:
    logs = sorted((fixtures_dir / RUMEN_TEST / "counters-format-test-logs").glob("*.gz"))
    rows = [r for p in logs for r in read(p)]
    names = {(c["group_name"], c["counter_name"]) for c in table(rows, "counters")}
    assert ("com.megacorp.grid.tools.counter", "SortFilter-#1[id]:Modified") in names
    assert ("org.apache.hadoop.mapreduce.JobCounter", "FALLOW_SLOTS_MILLIS_REDUCES") in names
    assert ("org.apache.hadoop.mapreduce.TaskCounter", "MAP_INPUT_RECORDS") in names
    scopes = Counter(c["scope"] for c in table(rows, "counters"))
    assert scopes["job_map"] > 0
    assert scopes["job_reduce"] > 0
    assert scopes["job_total"] > 0
    reduce_attempt = next(
        a for a in table(rows, "attempts") if a["attempt_id"] == "attempt_201002080801_40864_r_000000_0"
    )
    assert (reduce_attempt["shuffle_finish_ms"], reduce_attempt["sort_finish_ms"]) == (
        1265814256631,
        1265814256680,
    )


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


def test_crlf_history(fixtures_dir: Path) -> None:
    rows = read(fixtures_dir / "intel-hitune/chukwa-test-samples-crlf/JobHistory.log")
    (job,) = table(rows, "jobs")
    assert (job["job_id"], job["name"], job["total_maps"], job["total_reduces"]) == (
        "job_200909120624_0005",
        "sorter",
        10,
        8,
    )
    assert job["status"] == "SUCCEEDED"
    for row in rows:
        assert not any(isinstance(v, str) and "\r" in v for v in row.as_dict().values())
    attempts = table(rows, "attempts")
    assert len(attempts) == 20
    assert {a["rack"] for a in attempts} == {"/default-rack"}


@pytest.mark.parametrize(("log", "oracle"), ORACLE_PAIRS)
def test_matches_rumens_parse(fixtures_dir: Path, log: str, oracle: str) -> None:
    """Jobs, task and attempt ids, statuses, times and hosts equal Rumen's parse of the same log.

    Rumen writes -1 for unknown times and (a Rumen quirk for these logs) null job names.
    """
    rows = read(fixtures_dir / RUMEN_TEST / log)
    jobs = {j["job_id"]: j for j in table(rows, "jobs")}
    tasks = {t["task_id"]: t for t in table(rows, "tasks")}
    attempts = {a["attempt_id"]: a for a in table(rows, "attempts")}

    def status(raw: str | None) -> str | None:
        return "SUCCEEDED" if raw == "SUCCESS" else raw

    def known(ms: int) -> int | None:
        return None if ms == -1 else ms

    seen_tasks, seen_attempts = set(), set()
    objs = list(rumen_objects(fixtures_dir / RUMEN_TEST / oracle))
    assert sorted(jobs) == sorted(o["jobID"] for o in objs)
    for o in objs:
        j = jobs[o["jobID"]]
        assert (j["submit_ms"], j["launch_ms"], j["finish_ms"]) == (
            o["submitTime"],
            o["launchTime"],
            o["finishTime"],
        )
        assert (j["total_maps"], j["total_reduces"], j["user"]) == (
            o["totalMaps"],
            o["totalReduces"],
            o["user"],
        )
        assert j["status"] == status(o["outcome"])
        for kind in ("mapTasks", "reduceTasks", "otherTasks"):
            for t in o[kind]:
                mine = tasks[t["taskID"]]
                seen_tasks.add(t["taskID"])
                assert mine["task_type"] == t["taskType"]
                assert mine["status"] == status(t["taskStatus"])
                assert (mine["start_ms"], mine["finish_ms"]) == (
                    known(t["startTime"]),
                    known(t["finishTime"]),
                )
                for a in t["attempts"]:
                    ma = attempts[a["attemptID"]]
                    seen_attempts.add(a["attemptID"])
                    assert ma["status"] == status(a["result"])
                    assert (ma["start_ms"], ma["finish_ms"]) == (
                        known(a["startTime"]),
                        known(a["finishTime"]),
                    )
                    assert (ma["shuffle_finish_ms"], ma["sort_finish_ms"]) == (
                        known(a["shuffleFinished"]),
                        known(a["sortFinished"]),
                    )
                    assert (ma["host"], ma["rack"]) == split_rack_host(unescape_v1(a["hostName"]))
    assert seen_tasks == set(tasks)
    assert seen_attempts == set(attempts)


def test_truncated_log_keeps_the_cut_record(fixtures_dir: Path) -> None:
    """The cut record ``Task TASKID=... TASK_TY .`` is read like Hadoop does: its pairs, not the stub."""
    path = fixtures_dir / RUMEN_TEST / "truncated-job-tracker-log"
    ctx = ReadContext(path)
    rows = list(read_history_v1(path, ctx))
    task = next(t for t in table(rows, "tasks") if t["task_id"] == "task_200904211745_0002_m_000010")
    assert task["status"] is None
    assert task["finish_ms"] is None
    assert any("TASK_TY" in note for note in ctx.notes)
    stub = [json.loads(e["payload_json"]) for e in table(rows, "events")]
    assert any(p.get("unparsed") == "TASK_TY" for p in stub)


# -- synthetic inputs ----------------------------------------------------------

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
        ('Task TASKID="task_1_0001_m_000001" START_TIME="soon" .\n', 3, "START_TIME = 'soon' is not an integer"),
        ('MapAttempt TASKID="task_1_0001_m_000001" START_TIME="1" .\n', 3, "without TASK_ATTEMPT_ID"),
        (
            'Task START_TIME="99999999999999999999" TASKID="task_1_0001_m_000001" .\n',
            3,
            "does not fit in 64 bits",
        ),
        # int() reads '1_240' as 1240; Hadoop's Long.parseLong refuses it
        ('Task TASKID="task_1_0001_m_000001" START_TIME="1_240" .\n', 3, "START_TIME = '1_240' is not an integer"),
        # a stray quote: the record still ends at its '" .' (it had swallowed every later line)
        ('Task TASKID="task_1_0001_m_000001" TASK_TYPE="MA"P" .\n', 3, "holds an unescaped quote"),
        ('Task TASKID="task_1_0001_m_000001" ERROR="two\nlines" TASK_TYPE="MA"P" .\n', 3, "lines 3-4 holds"),
    ],
)
def test_a_line_that_is_no_record_is_skipped_and_named(tmp_path: Path, bad: str, line: int, what: str) -> None:
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


def test_one_bad_counter_value_skips_that_counter_only(fixtures_dir: Path, tmp_path: Path) -> None:
    # Rumen's real 0.20 job-tracker log: the last job record's first counter value made '12x4'.
    # The record, its event and its 18 other counters land; only that counter is skipped and named.
    src = fixtures_dir / RUMEN_TEST / "sample-job-tracker-logs.gz"
    lines = gzip.decompress(src.read_bytes()).decode().split("\n")  # (not splitlines: a form feed is no line end)
    k = max(i for i, ln in enumerate(lines) if ln.startswith("Job ") and "COUNTERS=" in ln)
    m = re.search(r"\)\((\d+)\)\]", lines[k])
    assert m is not None
    lines[k] = lines[k][: m.start(1)] + "12x4" + lines[k][m.end(1):]
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines))
    ctx = ReadContext(path)
    rows = list(read_history_v1(path, ctx))
    (error,) = ctx.skipped
    assert error.line == k + 1
    assert "'12x4' is not an integer" in error.message
    pristine_ctx = ReadContext(src)
    pristine = list(read_history_v1(src, pristine_ctx))
    assert ctx.events_read == pristine_ctx.events_read
    def others(of: list[Row | RowBlock]) -> list[Row | RowBlock]:
        return [r for r in of if r.table not in ("counters", "events")]

    assert others(rows) == others(pristine)
    assert sum(r.table == "events" for r in rows) == sum(r.table == "events" for r in pristine)  # its event too
    assert sum(r.n for r in rows if r.table == "counters") == sum(r.n for r in pristine if r.table == "counters") - 1


def test_a_malformed_embedded_conf_keeps_the_rest_of_the_file(fixtures_dir: Path, tmp_path: Path) -> None:
    src = fixtures_dir / RUMEN_TEST / "sample-job-tracker-logs.gz"
    lines = gzip.decompress(src.read_bytes()).decode().split("\n")
    k = next(i for i, ln in enumerate(lines) if "</property>" in ln)
    lines[k] = lines[k].replace("</property>", "</propert>", 1)
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines))
    ctx = ReadContext(path)
    rows = list(read_history_v1(path, ctx))
    (error,) = ctx.skipped
    assert (error.line, error.message.split(":")[0]) == (k + 1, "malformed XML")
    pristine = list(read_history_v1(src, ReadContext(src)))
    assert {r.table for r in rows} == {r.table for r in pristine}
    kept = [r for r in rows if r.table not in ("conf", "events")]
    assert kept == [r for r in pristine if r.table not in ("conf", "events")]  # every history record
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"


# -- property tests --------------------------------------------------------------


@pytest.fixture(scope="module")
def seed_bytes(fixtures_dir: Path) -> bytes:
    return gzip.decompress((fixtures_dir / RUMEN_TEST / "v20-single-input-log.gz").read_bytes())


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), gz=st.booleans())
def test_mutated_real_history_raises_only_phaseline_errors(
    fuzz_dir: Path, seed_bytes: bytes, data: st.DataObject, gz: bool
) -> None:
    mutated = data.draw(mutations(seed_bytes))
    path = fuzz_dir / "mutated.log"
    path.write_bytes(gzip.compress(mutated) if gz else mutated)
    error = read_checked(read_history_v1, path)
    assert error is None or str(path) in str(error)


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


HISTORY_018 = Path(__file__).parents[1] / "data" / "history-0.18" / "1225797913475_job_200811041125_0003"


def test_hadoop_018_history_without_record_delimiters() -> None:
    """0.18's records end at their last value's quote (tests/data/history-0.18/ORIGIN.md)."""
    assert detect(HISTORY_018, read_head(HISTORY_018)) is FORMATS[0]
    ctx = ReadContext(HISTORY_018)
    rows = list(read_history_v1(HISTORY_018, ctx))
    assert not ctx.skipped
    assert ctx.events_read == 17
    (job,) = table(rows, "jobs")
    assert job == job | {
        "job_id": "job_200811041125_0003", "name": "wordcount", "user": "hadoop", "status": "SUCCEEDED", "submit_ms": 1225800000000,
        "launch_ms": 1225800001000, "finish_ms": 1225800021000, "total_maps": 2, "total_reduces": 1,
        "finished_maps": 2, "failed_maps": 1, "hadoop_version": "0.18",
    }  # fmt: skip
    attempts = {a["attempt_id"].removeprefix("attempt_200811041125_0003_"): (a["status"], a["host"])
                for a in table(rows, "attempts")}  # fmt: skip
    assert attempts == {"m_000000_0": ("SUCCEEDED", "host1"), "m_000001_0": ("FAILED", "host2"),
                        "m_000001_1": ("SUCCEEDED", "host1"), "r_000000_0": ("SUCCEEDED", "host2")}  # fmt: skip
    failed = next(a for a in table(rows, "attempts") if a["status"] == "FAILED")
    assert failed["error"].splitlines() == [
        "java.io.IOException: Spill failed",
        "\tat org.apache.hadoop.mapred.MapTask$MapOutputBuffer.collect(MapTask.java:594)",
        "\tat org.apache.hadoop.mapred.MapTask.run(MapTask.java:227)",
    ]
    reduce = next(a for a in table(rows, "attempts") if a["task_type"] == "REDUCE")
    assert (reduce["shuffle_finish_ms"], reduce["sort_finish_ms"]) == (1225800017000, 1225800017200)
    counters = {(c["scope"], c["task_id"], c["group_name"], c["counter_name"]): c["value"]
                for c in table(rows, "counters")}  # fmt: skip
    assert counters[("task", "task_200811041125_0003_m_000000", "File Systems", "HDFS bytes read")] == 67108864
    assert counters[("job_total", None, "Map-Reduce Framework", "Map input records")] == 1500
    assert len(counters) == 10


def test_a_v1_history_still_refuses_a_record_line_without_its_delimiter(tmp_path: Path) -> None:
    path = tmp_path / "h"
    path.write_text('Meta VERSION="1" .\nJob JOBID="job_1_0001" USER="u"\nJob JOBID="job_1_0001" JOBNAME="n" .\n')
    ctx = ReadContext(path)
    rows = list(read_history_v1(path, ctx))
    assert [e.line for e in ctx.skipped] == [2]
    assert "does not end in ' .'" in str(ctx.skipped[0])
    assert table(rows, "jobs")[0]["hadoop_version"] == "0.20/1.x"
