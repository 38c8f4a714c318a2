"""Rumen JSON traces and topologies: real traces, exact counts, concatenated streams, bad input."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reader_checks import mutations, parse_error, read_checked, read_reconciled, rows_of, table

from ingest.base import ReadContext, Row, read_head
from ingest.history_v1 import read_history_v1
from ingest.rumen import FORMATS, read_rumen, sniff_rumen
from phaseline.errors import TraceTruncatedError

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
    with pytest.raises(TraceTruncatedError, match="ends inside a value"):
        got.extend(read_rumen(path, ReadContext(path)))
    assert [j["job_id"] for j in table(got, "jobs")] == ["job_1_0001"]


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ('{"jobID": "job_1_0001"}\n{"jobID": ]\n', 2, "malformed JSON"),
        ("[1, 2]\n", 1, "not an object"),
        ('{"jobID": "job_1_0001",\n "user": "u"}\n\n{"user": "v"}', 4, "without a jobID"),
        ('{"jobID": "j", "mapTasks": [{"taskID": "t", "startTime": "noon"}]}', 1, "not an integer"),
        ('{"jobID": "j", "mapTasks": {"taskID": "t"}}', 1, "not an array"),
    ],
)
def test_malformed_input_names_file_and_line(tmp_path: Path, text: str, line: int, what: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    error = parse_error(read_rumen, path, line, what)
    assert not isinstance(error, TraceTruncatedError)


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
