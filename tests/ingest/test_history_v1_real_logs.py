"""Hadoop 0.20/1.x text history: golden tests on real logs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from reader_checks import read_reconciled, table

from ingest.base import ReadContext
from ingest.formats import detect
from ingest.history_v1 import FORMATS, read_history_v1, sniff_history_v1
from ingest.opening import read_head
from tests.ingest.history_v1_helpers import RUMEN_TEST, read


def v1_files(fixtures: Path) -> list[Path]:
    return sorted(p for p in fixtures.rglob("*") if p.is_file() and sniff_history_v1(read_head(p), p))


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
    ok = next(a for a in table(rows, "attempts") if a["attempt_id"] == "attempt_200904211745_0001_m_000001_0")
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
