"""Rumen JSON traces and topologies: real traces, exact counts, the 1.x reader's view, the store."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from reader_checks import read_reconciled, table

from ingest.base import ReadContext
from ingest.history_v1 import read_history_v1
from ingest.opening import read_head
from ingest.rumen import FORMATS, sniff_rumen
from tests.ingest.rumen_helpers import MUMAK, read

SMALL = "apache-hadoop-mapreduce/rumen-small-trace-test"


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
