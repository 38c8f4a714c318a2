"""Rumen JSON traces and topologies: real traces, exact counts, concatenated streams, bad input."""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reader_checks import mutations, read_checked, read_reconciled, rows_of, table

from ingest.base import ReadContext, Row, read_head
from ingest.history_v1 import read_history_v1
from ingest.json_stream import iter_json_objects
from ingest.pipeline import ingest_paths
from ingest.rumen import FORMATS, read_rumen, sniff_rumen
from phaseline.errors import TraceTruncatedError
from phaseline.store import Store

MUMAK = "apache-hadoop-mapreduce/mumak"
SMALL = "apache-hadoop-mapreduce/rumen-small-trace-test"


def read(path: Path) -> list[Row]:
    return rows_of(read_rumen, path)


def test_every_rumen_fixture_parses(fixtures_dir: Path) -> None:
    files = sorted(p for p in fixtures_dir.rglob("*") if p.is_file() and sniff_rumen(read_head(p), p))
    assert len(files) == 19
    (fmt,) = FORMATS
    for path in files:
        rows, _ = read_reconciled(fmt, path)
        assert rows, path


def test_mumak_exact_counts(fixtures_dir: Path) -> None:
    rows = read(fixtures_dir / MUMAK / "19-jobs.trace.json.gz")
    jobs = table(rows, "jobs")
    assert len(jobs) == 19
    assert Counter(j["status"] for j in jobs) == {"SUCCEEDED": 14, "FAILED": 5}
    statuses = Counter(a["status"] for a in table(rows, "attempts"))
    assert (statuses["FAILED"], statuses["KILLED"]) == (3503, 1096)
    assert sum(statuses.values()) == 13041
    assert len(table(rows, "tasks")) == 11869
    assert Counter(e["event_type"] for e in table(rows, "events"))["RumenJob"] == 19
    assert all(a["host"] and "\\" not in a["host"] for a in table(rows, "attempts") if a["host"])


def test_sls_teragen(fixtures_dir: Path) -> None:
    rows = read(fixtures_dir / "apache-hadoop/hadoop-sls/2jobs2min-rumen-jh.json")
    jobs = table(rows, "jobs")
    assert [j["name"] for j in jobs] == ["TeraGen", "TeraGen"]
    assert sum(j["total_maps"] for j in jobs) == 192 == len(table(rows, "attempts"))
    assert {a["rack"] for a in table(rows, "attempts")} == {"/default-rack"}
    assert all(j["finished_maps"] == j["total_maps"] and j["failed_maps"] == 0 for j in jobs)
    assert table(rows, "conf")  # jobProperties


def test_a_job_written_twice_into_one_trace_is_read_once(fixtures_dir: Path) -> None:
    # gridmix's wordcount2.json holds the same LoggedJob object twice (a user's concatenated traces);
    # its tasks, attempts and counters must not double (they did: 12 tasks, every counter x2)
    gridmix = fixtures_dir / "apache-hadoop/hadoop-gridmix"
    (fmt,) = FORMATS
    rows, ctx = read_reconciled(fmt, gridmix / "wordcount2.json")
    once = read(gridmix / "wordcount.json")
    assert [j["job_id"] for j in table(rows, "jobs")] == ["job_201009241532_0001"]
    for name in ("jobs", "tasks", "attempts", "counters"):
        assert len(table(rows, name)) == len(table(once, name)) > 0, name
    assert len(table(rows, "tasks")) == 6  # 3 maps, 1 reduce, setup, cleanup, as the raw object says
    events = table(rows, "events")
    assert len(events) == len(table(once, "events")) + 1  # the first object's events, then the repeat
    assert events[-1]["event_type"] == "RumenJob"
    assert "mapTasks" in json.loads(events[-1]["payload_json"])  # kept whole
    assert any("job_201009241532_0001 is described again" in n for n in ctx.notes)


def test_agrees_with_the_1x_reader_on_the_same_jobs(fixtures_dir: Path) -> None:
    """Rumen's trace of the 0.20 logs and phaseline's parse of those logs give the same rows."""
    from_rumen = read(fixtures_dir / SMALL / "job-tracker-logs-trace-output.gz")
    log = fixtures_dir / SMALL / "sample-job-tracker-logs.gz"
    from_log = list(read_history_v1(log, ReadContext(log)))
    keys = (
        "attempt_id",
        "status",
        "start_ms",
        "finish_ms",
        "shuffle_finish_ms",
        "sort_finish_ms",
        "host",
        "rack",
    )
    rumen_attempts = sorted(tuple(a[k] for k in keys) for a in table(from_rumen, "attempts"))
    log_attempts = sorted(tuple(a[k] for k in keys) for a in table(from_log, "attempts"))
    assert rumen_attempts == log_attempts
    tkeys = ("task_id", "task_type", "status", "start_ms", "finish_ms", "successful_attempt_id")
    assert sorted(tuple(t[k] for k in tkeys) for t in table(from_rumen, "tasks")) == sorted(
        tuple(t[k] for k in tkeys) for t in table(from_log, "tasks")
    )


def test_attempt_counters_and_nulls(fixtures_dir: Path) -> None:
    rows = read(fixtures_dir / SMALL / "counters-test-trace.json.gz")
    got = {
        c["counter_name"]: c["value"]
        for c in table(rows, "counters")
        if c["attempt_id"] == "attempt_201002080801_40864_m_000000_0"
    }
    assert got == {
        "HDFS_BYTES_READ": 1377,
        "FILE_BYTES_WRITTEN": 1113,
        "MAP_INPUT_RECORDS": 10,
        "MAP_INPUT_BYTES": 574,
        "MAP_OUTPUT_BYTES": 1394,
        "MAP_OUTPUT_RECORDS": 10,
        "COMBINE_INPUT_RECORDS": 0,
        "SPILLED_RECORDS": 10,
    }
    no_host = [a for a in table(rows, "attempts") if a["host"] is None]
    assert len(no_host) == 3
    assert all(a["status"] == "KILLED" for a in no_host)


def test_topologies(fixtures_dir: Path) -> None:
    rows = table(read(fixtures_dir / MUMAK / "topo-with-numeric-ips.json"), "topology")
    assert sorted((r["rack"], r["host"]) for r in rows) == [
        ("/192.30.63.64", "192.30.63.69"),
        ("/192.30.63.64", "192.30.63.81"),
        ("/194.6.129.64", "194.6.129.67"),
        ("/194.6.129.64", "node1817.megatron.com"),
    ]
    big = table(read(fixtures_dir / MUMAK / "19-jobs.topology.json.gz"), "topology")
    assert len(big) == len({r["host"] for r in big}) > 1000


JOB = {
    "jobID": "job_1_0001",
    "user": "u",
    "jobName": "n\\.x",
    "outcome": "SUCCESS",
    "submitTime": 5,
    "launchTime": -1,
    "finishTime": 9,
    "totalMaps": 1,
    "totalReduces": 0,
    "mapTasks": [
        {
            "taskID": "task_1_0001_m_000000",
            "taskType": "MAP",
            "taskStatus": "SUCCESS",
            "startTime": 6,
            "finishTime": 8,
            "preferredLocations": [{"layers": ["r\\.1", "h\\.1"]}],
            "attempts": [
                {
                    "attemptID": "attempt_1_0001_m_000000_0",
                    "result": "SUCCESS",
                    "hostName": None,
                    "location": {"layers": ["r\\.1", "h\\.1"]},
                    "startTime": 6,
                    "finishTime": 8,
                    "resourceUsageMetrics": {"cumulativeCpuUsage": 70, "heapUsage": 0},
                }
            ],
        }
    ],
    "reduceTasks": None,
    "otherTasks": [],
}


def test_concatenated_objects_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    two = dict(JOB, jobID="job_1_0002")
    path.write_text(json.dumps(JOB) + json.dumps(two) + "\n\n")
    rows = read(path)
    jobs = table(rows, "jobs")
    assert [j["job_id"] for j in jobs] == ["job_1_0001", "job_1_0002"]
    assert jobs[0]["name"] == "n.x"
    assert jobs[0]["launch_ms"] is None
    assert jobs[0]["status"] == "SUCCEEDED"
    attempt = table(rows, "attempts")[0]
    assert (attempt["host"], attempt["rack"]) == ("h.1", "/r.1")  # from location when hostName is null
    assert table(rows, "tasks")[0]["splits"] == "/r.1/h.1"
    cpu = [c for c in table(rows, "counters") if c["counter_name"] == "CPU_MILLISECONDS"]
    assert [c["value"] for c in cpu] == [70, 70]


def test_cut_stream_is_truncation_after_complete_jobs(tmp_path: Path) -> None:
    path = tmp_path / "t.json.gz"
    text = json.dumps(JOB, indent=2) + "\n" + json.dumps(dict(JOB, jobID="job_1_0002"), indent=2)
    path.write_bytes(gzip.compress(text[: len(text) - 40].encode()))
    got: list[Row] = []
    ctx = ReadContext(path)
    with pytest.raises(TraceTruncatedError, match="ends inside a value"):
        got.extend(read_rumen(path, ctx))
    # the second job is cut after its one task: it is kept with that task, and noted
    assert [j["job_id"] for j in table(got, "jobs")] == ["job_1_0001", "job_1_0002"]
    assert [t["job_id"] for t in table(got, "tasks")] == ["job_1_0001", "job_1_0002"]
    assert any("job_1_0002 was cut short inside its task lists" in n for n in ctx.notes)


GOOD_JOB = '{"jobID": "job_9_0001", "mapTasks": [{"taskID": "task_9_0001_m_000000", "attempts": []}]}\n'


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ('{"jobID": "job_1_0001"}\n{"jobID": ]\n', 2, "malformed JSON"),
        ("[1, 2]\n", 1, "not an object"),
        ('{"jobID": "job_1_0001",\n "user": "u"}\n\n{"user": "v"}\n', 4, "without a jobID"),
        ('{"jobID": "j", "submitTime": "noon"}\n', 1, "not an integer"),
        ('{"jobID": "j", "submitTime": 1e30}\n', 1, "submitTime = 1e+30 does not fit in 64 bits"),  # had been NULL
        ('{"jobID": "j", "mapTasks": {"taskID": "t"}}\n', 1, "not an array"),
    ],
)
def test_an_unreadable_job_is_skipped_and_named(tmp_path: Path, text: str, line: int, what: str) -> None:
    # ... and the job after it lands
    path = tmp_path / "bad.json"
    path.write_text(text + GOOD_JOB)
    ctx = ReadContext(path)
    rows = list(read_rumen(path, ctx))
    (error,) = ctx.skipped
    assert what in error.message
    assert (error.line, error.path) == (line, str(path))
    assert not isinstance(error, TraceTruncatedError)
    assert "job_9_0001" in {j["job_id"] for j in table(rows, "jobs")}
    assert [t["task_id"] for t in table(rows, "tasks") if t["job_id"] == "job_9_0001"] == ["task_9_0001_m_000000"]


def test_a_malformed_job_of_the_mumak_trace_is_skipped_and_the_rest_lands(fixtures_dir: Path, tmp_path: Path) -> None:
    # One job per line (19 jobs): a byte of job 5 made unreadable JSON leaves the other 18 jobs' rows exactly.
    src = fixtures_dir / MUMAK / "19-jobs.trace.json.gz"
    lines = gzip.decompress(src.read_bytes()).decode().splitlines(keepends=True)
    victim = json.loads(lines[4])["jobID"]
    lines[4] = lines[4].replace('"user":', '"user" ', 1)
    path = tmp_path / "bad.trace.json.gz"
    path.write_bytes(gzip.compress("".join(lines).encode()))
    ctx = ReadContext(path)
    rows = list(read_rumen(path, ctx))
    (error,) = ctx.skipped
    assert "malformed JSON" in error.message
    assert error.line == 5
    pristine = read(src)
    assert len(table(rows, "jobs")) == 18
    for name in ("tasks", "attempts", "counters", "conf"):
        assert table(rows, name) == [r for r in table(pristine, name) if r["job_id"] != victim], name

    def events(of: list[Row]) -> list[tuple[object, ...]]:  # seq counts the file's events: it shifts
        return [(e["job_id"], e["event_type"], e["ts_ms"], e["payload_json"]) for e in table(of, "events")]

    assert events(rows) == [e for e in events(pristine) if e[0] != victim]
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert "1 unreadable record skipped (line 5)" in (result.error or "")


@pytest.mark.parametrize("indent", [None, 2])
def test_a_malformed_pretty_printed_job_is_skipped_to_the_next(fixtures_dir: Path, tmp_path: Path,
                                                               indent: int | None) -> None:
    # Three copies of gridmix's real word count job, as Jackson wrote it (indent None: the file's own
    # text) or re-printed with nested objects starting their own lines; the middle one is broken.
    text = (fixtures_dir / "apache-hadoop/hadoop-gridmix/wordcount.json").read_text()
    if indent is not None:
        text = json.dumps(json.loads(text), indent=indent) + "\n"
    copies = [text.replace("job_201009241532_0001", f"job_201009241532_000{k}") for k in (1, 2, 3)]
    copies[1] = copies[1].replace('"SUCCESS"', "SUCCESS", 2)  # an attempt's result, unquoted
    path = tmp_path / "three.json"
    path.write_text("".join(copies))
    ctx = ReadContext(path)
    rows = list(read_rumen(path, ctx))
    (error,) = ctx.skipped
    assert "malformed JSON" in error.message
    assert error.line == copies[0].count("\n") + copies[1][: copies[1].index("SUCCESS")].count("\n") + 1
    assert [j["job_id"] for j in table(rows, "jobs")] == ["job_201009241532_0001", "job_201009241532_0003"]
    once = read(fixtures_dir / "apache-hadoop/hadoop-gridmix/wordcount.json")
    assert len(table(rows, "attempts")) == 2 * len(table(once, "attempts")) > 0


def test_an_unreadable_task_or_attempt_is_skipped_and_its_job_kept(fixtures_dir: Path, tmp_path: Path) -> None:
    src = fixtures_dir / MUMAK / "19-jobs.trace.json.gz"
    job = json.loads(gzip.decompress(src.read_bytes()).decode().splitlines()[0])
    tasks = job["mapTasks"]
    bad_task, bad_attempt = tasks[0]["taskID"], tasks[1]["attempts"][0]["attemptID"]
    tasks[0]["startTime"] = "noon"
    tasks[1]["attempts"][0]["hdfsBytesRead"] = [1]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(job))
    ctx = ReadContext(path)
    rows = list(read_rumen(path, ctx))
    assert [e.message for e in ctx.skipped] == [
        f"{bad_task}.startTime = 'noon' is not an integer",
        f"{bad_attempt}.hdfsBytesRead = '[1]' is not an integer",
    ]
    assert bad_task not in {t["task_id"] for t in table(rows, "tasks")}
    assert tasks[1]["taskID"] in {t["task_id"] for t in table(rows, "tasks")}
    assert bad_attempt not in {a["attempt_id"] for a in table(rows, "attempts")}
    assert bad_attempt not in {c["attempt_id"] for c in table(rows, "counters")}
    n_tasks = len(job["mapTasks"]) + len(job["reduceTasks"]) + len(job["otherTasks"])
    assert len(table(rows, "tasks")) == n_tasks - 1
    assert ctx.events_read == len(table(rows, "events")) == n_tasks  # the job and its readable tasks


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), gz=st.booleans())
def test_mutated_real_trace_raises_only_phaseline_errors(
    fuzz_dir: Path, fixtures_dir: Path, data: st.DataObject, gz: bool
) -> None:
    seed = (fixtures_dir / "apache-hadoop/hadoop-gridmix/wordcount.json").read_bytes()
    mutated = data.draw(mutations(seed))
    path = fuzz_dir / "mutated.json"
    path.write_bytes(gzip.compress(mutated) if gz else mutated)
    error = read_checked(read_rumen, path)
    assert error is None or str(path) in str(error)


def test_lands_in_the_store_with_topology(fixtures_dir: Path, store_dir: Path) -> None:
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    store = Store(store_dir)
    summary = ingest_paths([fixtures_dir / MUMAK], store)
    assert {r.status for r in summary.results} == {"landed"}
    con = store.connect()
    assert con.execute("select count(*) from jobs").fetchone() == (19,)
    failed_killed = con.execute(
        "select count(*) filter (status = 'FAILED'), count(*) filter (status = 'KILLED') from attempts"
    )
    assert failed_killed.fetchone() == (3503, 1096)
    assert con.execute(
        "select count(distinct host) > 1000 from topology where rack is not null"
    ).fetchone() == (True,)


def test_a_zero_time_is_unknown_not_1970(fixtures_dir: Path) -> None:
    # the mumak trace has six failed attempts with "startTime": 0 (they failed before starting);
    # stored as epoch 0 they stretched a report's wave span to 1.24e12 ms
    rows = read(fixtures_dir / MUMAK / "19-jobs.trace.json.gz")
    attempts = {a["attempt_id"]: a for a in table(rows, "attempts")}
    failed_early = attempts["attempt_200904211745_0015_r_000445_0"]
    assert failed_early["status"] == "FAILED"
    assert failed_early["start_ms"] is None
    assert failed_early["finish_ms"] > 1_200_000_000_000
    times = [a[k] for a in attempts.values() for k in ("start_ms", "finish_ms", "shuffle_finish_ms")]
    assert all(t > 1_200_000_000_000 for t in times if t is not None)  # no 1970 left
    assert sum(a["start_ms"] is None for a in attempts.values()) == 6


def test_an_integer_past_64_bits_in_a_kept_field_is_kept_as_its_digits(fixtures_dir: Path, tmp_path: Path) -> None:
    # A flipped byte made a field phaseline only keeps (in the RumenJob event) a 70-bit integer; the
    # stdlib decoder reads it, orjson could not write it back: a TypeError, not a phaseline error
    obj = json.loads((fixtures_dir / "apache-hadoop/hadoop-gridmix/wordcount.json").read_text())
    obj["clusterMapMB"] = 2**70
    path = tmp_path / "big.json"
    path.write_text(json.dumps(obj))
    events = table(read(path), "events")
    job = next(e for e in events if e["event_type"] == "RumenJob")
    assert json.loads(job["payload_json"])["clusterMapMB"] == str(2**70)
    assert len(table(read(path), "jobs")) == 1


def test_a_malformed_value_is_told_without_reading_the_rest_of_the_stream(fixtures_dir: Path) -> None:
    # The mumak trace (11.5 M characters) with its first job broken: the skip and the next job come after
    # one read block, not after reading to the end (as before, to tell a bad value from a value cut by the buffer).
    text = gzip.decompress((fixtures_dir / MUMAK / "19-jobs.trace.json.gz").read_bytes()).decode()
    lines = text.splitlines(keepends=True)
    lines[0] = lines[0].replace('"user":', '"user" ', 1)
    read_chars = []

    class Counting(io.StringIO):
        def read(self, size: int | None = -1) -> str:
            got = super().read(size)
            read_chars.append(len(got))
            return got

    path = Path("mumak-broken.json")
    ctx = ReadContext(path)
    jobs = iter_json_objects(Counting("".join(lines)), path, ctx, lambda v: isinstance(v, dict) and "jobID" in v)
    line, job = next(jobs)
    assert (line, job["jobID"]) == (2, json.loads(lines[1])["jobID"])
    assert [e.line for e in ctx.skipped] == [1]
    assert sum(read_chars) <= 1 << 20 < len(text) // 10


@pytest.mark.parametrize("name", ["apache-hadoop/hadoop-sls/2jobs2min-rumen-jh.json",
                                  "apache-hadoop/hadoop-gridmix/wordcount.json"])  # fmt: skip
def test_a_job_cut_inside_its_task_lists_keeps_its_complete_tasks(fixtures_dir: Path, tmp_path: Path,
                                                                    name: str) -> None:  # fmt: skip
    src = fixtures_dir / name
    text = src.read_text()
    last = text.rfind('"jobID"')  # cut the last job halfway: inside its task lists
    path = tmp_path / "cut.json"
    path.write_text(text[: (last + len(text)) // 2])
    ctx = ReadContext(path)
    rows: list[Row] = []
    with pytest.raises(TraceTruncatedError) as info:
        rows.extend(read_rumen(path, ctx))
    assert "the complete parts of the one it cut" in (info.value.hint or "")
    pristine = read(src)
    cut_job = table(pristine, "jobs")[-1]["job_id"]
    assert any(f"{cut_job} was cut short inside its task lists" in n for n in ctx.notes)
    tasks = table(rows, "tasks")
    assert 0 < sum(t["job_id"] == cut_job for t in tasks) < sum(t["job_id"] == cut_job for t in table(pristine, "tasks"))
    for name_ in ("tasks", "attempts", "counters"):  # what landed is what the whole trace says of it
        got = table(rows, name_)
        assert got == [r for r in table(pristine, name_) if r in got], name_
    landed = {t["task_id"] for t in tasks}
    assert {a["task_id"] for a in table(rows, "attempts")} <= landed  # no attempt of a task cut away
