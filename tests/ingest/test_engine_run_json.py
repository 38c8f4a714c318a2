"""The local engine's run.json: job, counters and parameters land; bad documents and fields are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reader_checks import table

from ingest.base import ReadContext
from ingest.engine_run import read_engine_run
from ingest.formats import detect
from ingest.pipeline import ingest_paths
from phaseline.errors import TraceParseError
from phaseline.store import Store

RUN_JSON = {
    "format": "phaseline-engine-run",
    "version": 1,
    "job_id": "job_local1_0001",
    "job_name": "phaseline-bench",
    "user": "root",
    "status": "SUCCEEDED",
    "submit_ms": 1000,
    "launch_ms": None,
    "finish_ms": 9000,
    "wall_start_ms": 500,
    "wall_end_ms": 9500,
    "hadoop_version": "3.5.0",
    "java_version": "17.0.15",
    "params": {"input_mb": 4.0, "maps": 2, "reduces": 1, "selectivity": 0.5},
    "settings": {"mapreduce.task.io.sort.mb": "1"},
    "counters": {"org.apache.hadoop.mapreduce.TaskCounter": {"MAP_INPUT_RECORDS": 41943}},
    "tasks": [],
    "log": "logs/job.log",
    "conf": "job_local1_0001_conf.xml",
    "jfr": None,
}


def test_engine_run_json_lands_job_counters_and_parameters(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(RUN_JSON, indent=1))
    fmt = detect(path)
    assert fmt is not None
    assert fmt.name == "phaseline-engine-run"
    rows = list(fmt.read(path, ReadContext(path)))
    (job,) = table(rows, "jobs")
    assert (job["job_id"], job["status"], job["total_maps"], job["total_reduces"]) == (
        "job_local1_0001",
        "SUCCEEDED",
        2,
        1,
    )
    (counter,) = table(rows, "counters")
    assert (counter["scope"], counter["counter_name"], counter["value"]) == (
        "job_total",
        "MAP_INPUT_RECORDS",
        41943,
    )
    (event,) = table(rows, "events")
    assert '"selectivity":0.5' in str(event["payload_json"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "phaseline-engine-run",\n "version": 1,\n "job_id": }', "not valid JSON"),
        ('{"format": "phaseline-engine-run", "version": 7, "job_id": "job_local1_0001"}', "version 7"),
        (
            '{"format": "phaseline-engine-run", "version": 1, "job_id": "j", "submit_ms": "x"}',
            "submit_ms must be a 64-bit integer",
        ),
    ],
)
def test_a_bad_run_json_is_a_parse_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "run.json"
    path.write_text(text)
    fmt = detect(path)
    assert fmt is not None
    with pytest.raises(TraceParseError, match=message):
        list(fmt.read(path, ReadContext(path)))


@pytest.mark.parametrize("bad", ["n/a", 2**64])
def test_an_unreadable_run_json_counter_is_skipped_and_named(tmp_path: Path, bad: object) -> None:
    # The bundled sample's real run.json with one counter made unreadable: the others land
    src = Path(__file__).parents[2] / "sample_traces" / "bench-8mb-sel1.0" / "run.json"
    doc = json.loads(src.read_text())
    group = doc["counters"]["org.apache.hadoop.mapreduce.TaskCounter"]
    name = next(iter(group))
    group[name] = bad
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc, indent=1))
    ctx = ReadContext(path)
    rows = list(read_engine_run(path, ctx))
    (error,) = ctx.skipped
    assert f"counter org.apache.hadoop.mapreduce.TaskCounter/{name} must be a 64-bit integer" in error.message
    pristine = [r.values for r in read_engine_run(src, ReadContext(src)) if r.table == "counters"]
    assert [r.values for r in rows if r.table == "counters"] == [
        c for c in pristine if c["counter_name"] != name
    ]
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert "1 unreadable record skipped, " in (result.error or "")


@pytest.mark.parametrize(("key", "value"), [("status", 5), ("job_name", {"a": 1}), ("user", [1])])
def test_a_run_json_field_of_the_wrong_type_is_named(tmp_path: Path, key: str, value: object) -> None:
    # An int status raised AttributeError ('int' object has no attribute 'strip') out of the reader
    src = Path(__file__).parents[2] / "sample_traces" / "bench-8mb-sel1.0" / "run.json"
    doc = json.loads(src.read_text())
    doc[key] = value
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceParseError, match=f"run.json '{key}' must be a string"):
        list(read_engine_run(path, ReadContext(path)))


def test_a_run_json_task_id_of_the_wrong_type_skips_that_tasks_counters(tmp_path: Path) -> None:
    src = Path(__file__).parents[2] / "sample_traces" / "bench-8mb-sel1.0" / "run.json"
    doc = json.loads(src.read_text())
    group = "org.apache.hadoop.mapreduce.TaskCounter"
    doc["tasks"] = [
        {"task_id": 5, "counters": {group: {"MAP_INPUT_RECORDS": 1}}},
        {"task_id": "task_local1_0001_m_000001", "counters": {group: {"MAP_INPUT_RECORDS": 2}}},
    ]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    ctx = ReadContext(path)
    rows = list(read_engine_run(path, ctx))
    assert [e.message for e in ctx.skipped] == ["run.json 'task_id' must be a string, got '5'"]
    tasks = [c for c in table(rows, "counters") if c["scope"] == "task"]
    assert [(c["task_id"], c["value"]) for c in tasks] == [("task_local1_0001_m_000001", 2)]
