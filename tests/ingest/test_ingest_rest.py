"""History Server REST JSON responses, shaped as Hadoop's HistoryServerRest page documents them.

The inputs are written here (own ids and values), following the documented
structure of each response: ``{"job": {...}}``, ``{"jobs": {"job": [...]}}``,
``{"tasks": {"task": [...]}}``, ``{"taskAttempts": {"taskAttempt": [...]}}``,
``{"jobCounters": {"id", "counterGroup": [...]}}``, ``{"jobTaskCounters": ...}``,
``{"jobTaskAttemptCounters": ...}``, ``{"conf": {"path", "property": [...]}}``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from reader_checks import mutations, read_checked, read_reconciled, rows_of, table

from ingest.base import ReadContext, Row
from ingest.formats import detect
from ingest.pipeline import ingest_paths
from ingest.rest_json import read_rest_json, sniff_rest_json
from ingest.rumen import sniff_rumen
from phaseline.store import Store

JOB = "job_1700000000000_0042"
MAP_TASK = "task_1700000000000_0042_m_000003"
RED_TASK = "task_1700000000000_0042_r_000000"
MAP_ATTEMPT = "attempt_1700000000000_0042_m_000003_1"
RED_ATTEMPT = "attempt_1700000000000_0042_r_000000_0"

JOB_RESPONSE = {
    "job": {
        "id": JOB,
        "name": "terasort",
        "queue": "research",
        "user": "ana",
        "state": "SUCCEEDED",
        "diagnostics": "",
        "submitTime": 1700000100000,
        "startTime": 1700000100250,
        "finishTime": 1700000190000,
        "mapsTotal": 4,
        "mapsCompleted": 4,
        "reducesTotal": 1,
        "reducesCompleted": 1,
        "uberized": False,
        "avgMapTime": 12000,
        "failedMapAttempts": 1,
        "killedMapAttempts": 0,
        "successfulMapAttempts": 4,
        "acls": [{"name": "mapreduce.job.acl-view-job", "value": " "}],
    }
}
JOBS_RESPONSE = {
    "jobs": {
        "job": [
            {"id": JOB, "name": "terasort", "state": "SUCCEEDED", "user": "ana", "queue": "research",
             "submitTime": 1700000100000, "startTime": 1700000100250, "finishTime": 1700000190000,
             "mapsTotal": 4, "mapsCompleted": 4, "reducesTotal": 1, "reducesCompleted": 1},
            {"id": "job_1700000000000_0043", "name": "wc", "state": "FAILED", "user": "bo", "queue": "default",
             "submitTime": 1700000200000, "startTime": 1700000200100, "finishTime": 0,
             "mapsTotal": 2, "mapsCompleted": 1, "reducesTotal": 1, "reducesCompleted": 0},
        ]
    }
}  # fmt: skip
TASKS_RESPONSE = {
    "tasks": {
        "task": [
            {"id": MAP_TASK, "type": "MAP", "state": "SUCCEEDED", "progress": 100.0, "startTime": 1700000101000,
             "finishTime": 1700000113000, "elapsedTime": 12000, "successfulAttempt": MAP_ATTEMPT},
            {"id": RED_TASK, "type": "REDUCE", "state": "SUCCEEDED", "progress": 100.0, "startTime": 1700000105000,
             "finishTime": 1700000189000, "elapsedTime": 84000, "successfulAttempt": RED_ATTEMPT},
        ]
    }
}  # fmt: skip
ATTEMPTS_RESPONSE = {
    "taskAttempts": {
        "taskAttempt": [
            {"id": RED_ATTEMPT, "type": "REDUCE", "state": "SUCCEEDED", "progress": 100.0,
             "startTime": 1700000106000, "finishTime": 1700000189000, "elapsedTime": 83000,
             "shuffleFinishTime": 1700000150000, "mergeFinishTime": 1700000152000,
             "elapsedShuffleTime": 44000, "elapsedMergeTime": 2000, "elapsedReduceTime": 37000,
             "rack": "/rack-7", "nodeHttpAddress": "worker-3.example.org:8042",
             "assignedContainerId": "container_1700000000000_0042_01_000009", "diagnostics": ""},
        ]
    }
}  # fmt: skip
ATTEMPT_RESPONSE = {
    "taskAttempt": {
        "id": MAP_ATTEMPT, "type": "MAP", "state": "FAILED", "startTime": 1700000101500, "finishTime": 1700000102000,
        "rack": "/rack-2", "nodeHttpAddress": "worker-9.example.org:8042", "diagnostics": "Error: disk full",
        "assignedContainerId": "container_1700000000000_0042_01_000004",
    }
}  # fmt: skip
JOB_COUNTERS = {
    "jobCounters": {
        "id": JOB,
        "counterGroup": [
            {"counterGroupName": "org.apache.hadoop.mapreduce.TaskCounter",
             "counter": [{"name": "MAP_OUTPUT_BYTES", "totalCounterValue": 900, "mapCounterValue": 900,
                          "reduceCounterValue": 0},
                         {"name": "REDUCE_SHUFFLE_BYTES", "totalCounterValue": 950, "mapCounterValue": 0,
                          "reduceCounterValue": 950}]},
        ],
    }
}  # fmt: skip
TASK_COUNTERS = {
    "jobTaskCounters": {
        "id": MAP_TASK,
        "taskCounterGroup": [
            {"counterGroupName": "org.apache.hadoop.mapreduce.FileSystemCounter",
             "counter": [{"name": "HDFS_BYTES_READ", "value": 1024}, {"name": "FILE_BYTES_WRITTEN", "value": 77}]},
        ],
    }
}  # fmt: skip
ATTEMPT_COUNTERS = {
    "jobTaskAttemptCounters": {
        "id": RED_ATTEMPT,
        "taskAttemptCounterGroup": [
            {"counterGroupName": "org.apache.hadoop.mapreduce.TaskCounter",
             "counter": [{"name": "REDUCE_INPUT_RECORDS", "value": 31}]},
        ],
    }
}  # fmt: skip
CONF_RESPONSE = {
    "conf": {
        "path": f"hdfs://nn:9000/user/ana/.staging/{JOB}/job.xml",
        "property": [
            {"name": "mapreduce.job.reduces", "value": "1", "source": ["mapred-site.xml", "job.xml"]},
            {"name": "io.sort.mb", "value": "256", "source": ["programmatically"]},
        ],
    }
}
ALL: list[dict[str, Any]] = [JOB_RESPONSE, JOBS_RESPONSE, TASKS_RESPONSE, ATTEMPTS_RESPONSE, ATTEMPT_RESPONSE,
       JOB_COUNTERS, TASK_COUNTERS, ATTEMPT_COUNTERS, CONF_RESPONSE]  # fmt: skip


def write(tmp_path: Path, *docs: Any, name: str = "r.json") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(d, indent=1) for d in docs) + "\n")
    return path


def read(path: Path, hint: str | None = None) -> list[Row]:
    return rows_of(read_rest_json, path, hint)


@pytest.mark.parametrize("doc", ALL, ids=[next(iter(d)) for d in ALL])
def test_each_response_is_detected_and_read(tmp_path: Path, doc: dict[str, Any]) -> None:
    path = write(tmp_path, doc)
    fmt = detect(path)
    assert fmt is not None
    assert fmt.name == "rest_json"
    assert not sniff_rumen(path.read_bytes(), path)
    rows, ctx = read_reconciled(fmt, path)
    (event,) = table(rows, "events")
    assert ctx.events_read == 1  # one response, one event
    assert event["event_type"] == f"rest:{next(iter(doc))}"


def test_job(tmp_path: Path) -> None:
    (job,) = table(read(write(tmp_path, JOB_RESPONSE)), "jobs")
    assert job["job_id"] == JOB
    assert job["status"] == "SUCCEEDED"
    assert job["uberized"] is False
    assert (job["submit_ms"], job["launch_ms"], job["finish_ms"]) == (
        1700000100000,
        1700000100250,
        1700000190000,
    )
    assert (job["total_maps"], job["finished_maps"], job["total_reduces"]) == (4, 4, 1)
    assert job["diagnostics"] is None
    assert job["source_format"] == "rest_json"


def test_jobs_list_and_unfinished_times(tmp_path: Path) -> None:
    jobs = table(read(write(tmp_path, JOBS_RESPONSE)), "jobs")
    assert [j["job_id"] for j in jobs] == [JOB, "job_1700000000000_0043"]
    assert jobs[1]["status"] == "FAILED"
    assert jobs[1]["finish_ms"] is None
    assert table(read(write(tmp_path, {"jobs": None})), "jobs") == []


def test_tasks_take_their_job_from_the_task_id(tmp_path: Path) -> None:
    tasks = table(read(write(tmp_path, TASKS_RESPONSE)), "tasks")
    assert [(t["job_id"], t["task_id"], t["task_type"]) for t in tasks] == [
        (JOB, MAP_TASK, "MAP"),
        (JOB, RED_TASK, "REDUCE"),
    ]
    assert tasks[1]["successful_attempt_id"] == RED_ATTEMPT
    assert tasks[1]["finish_ms"] == 1700000189000


def test_attempts(tmp_path: Path) -> None:
    rows = read(write(tmp_path, ATTEMPTS_RESPONSE, ATTEMPT_RESPONSE))
    red, mapper = table(rows, "attempts")
    assert (red["job_id"], red["task_id"]) == (JOB, RED_TASK)
    assert (red["shuffle_finish_ms"], red["sort_finish_ms"]) == (1700000150000, 1700000152000)
    assert (red["host"], red["http_port"], red["rack"]) == ("worker-3.example.org", 8042, "/rack-7")
    assert red["container_id"] == "container_1700000000000_0042_01_000009"
    assert red["error"] is None
    assert (mapper["status"], mapper["error"], mapper["task_id"]) == ("FAILED", "Error: disk full", MAP_TASK)
    assert mapper["shuffle_finish_ms"] is None


def test_counters_at_every_scope(tmp_path: Path) -> None:
    rows = read(write(tmp_path, JOB_COUNTERS, TASK_COUNTERS, ATTEMPT_COUNTERS))
    got = {
        (c["scope"], c["task_id"], c["attempt_id"], c["counter_name"]): c["value"]
        for c in table(rows, "counters")
    }
    assert got[("job_total", None, None, "MAP_OUTPUT_BYTES")] == 900
    assert got[("job_map", None, None, "MAP_OUTPUT_BYTES")] == 900
    assert got[("job_reduce", None, None, "REDUCE_SHUFFLE_BYTES")] == 950
    assert got[("task", MAP_TASK, None, "HDFS_BYTES_READ")] == 1024
    assert got[("attempt", RED_TASK, RED_ATTEMPT, "REDUCE_INPUT_RECORDS")] == 31
    assert len(got) == 6 + 2 + 1
    assert {c["job_id"] for c in table(rows, "counters")} == {JOB}


def test_conf(tmp_path: Path) -> None:
    conf = table(read(write(tmp_path, CONF_RESPONSE)), "conf")
    assert conf == [
        {"job_id": JOB, "key": "mapreduce.job.reduces", "value": "1", "source": "mapred-site.xml, job.xml"},
        {"job_id": JOB, "key": "io.sort.mb", "value": "256", "source": "programmatically"},
    ]


def test_job_id_hint_for_ids_without_a_job_part(tmp_path: Path) -> None:
    doc = {"task": {"id": "t1", "type": "MAP", "state": "RUNNING", "startTime": 5, "finishTime": 0}}
    path = write(tmp_path, doc)
    ctx = ReadContext(path)
    assert list(read_rest_json(path, ctx)) == []
    assert [e.message for e in ctx.skipped] == [
        "cannot tell the job of t1: its id has no job part and no job id hint was given"
    ]
    (task,) = table(read(path, hint=JOB), "tasks")
    assert task["job_id"] == JOB
    assert task["status"] == "RUNNING"
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "quarantined"  # nothing in it could be read
    assert "cannot tell the job of t1" in (result.error or "")


@pytest.mark.parametrize(
    ("doc", "what"),
    [
        ({"job": {"id": JOB, "submitTime": "yesterday"}}, "is not a 64-bit integer"),
        ({"job": {"name": "no id"}}, "a job has no id"),
        ({"tasks": {"task": "nope"}}, "not an array"),
        ({"jobTaskAttemptCounters": {"taskAttemptCounterGroup": []}}, "needs its attempt id"),
        ({"job": {}, "jobs": {}}, "not a History Server response"),
        ('{"job": {"id": ]}', "malformed JSON"),
        # deeper than the decoder can go: it had ended the file (the response after it lost)
        ('{"job": {"id": "x", "extra": ' + "[" * 5000 + "]" * 5000 + "}}", "nested deeper than"),
    ],
)
def test_an_unreadable_response_is_skipped_and_named(tmp_path: Path, doc: dict[str, Any] | str, what: str) -> None:
    # ... between two good responses, which land
    path = tmp_path / "r.json"
    path.write_text("\n".join(d if isinstance(d, str) else json.dumps(d, indent=1)
                              for d in (JOB_RESPONSE, doc, TASKS_RESPONSE)) + "\n")  # fmt: skip
    ctx = ReadContext(path)
    rows = list(read_rest_json(path, ctx))
    (error,) = ctx.skipped
    assert what in error.message
    assert (error.line, error.path) == (2 + json.dumps(JOB_RESPONSE, indent=1).count("\n"), str(path))
    assert [j["job_id"] for j in table(rows, "jobs")] == [JOB]
    assert [t["task_id"] for t in table(rows, "tasks")] == [MAP_TASK, RED_TASK]
    assert ctx.events_read == 2 == len(table(rows, "events"))


def test_a_value_nested_600_deep_lands_whole(tmp_path: Path) -> None:
    # the decoder reads it; the walk that writes big integers as text recursed twice per level
    # and raised a RecursionError, which lost the whole file
    deep = json.loads("[" * 600 + "]" * 600)
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"job": {"id": JOB, "extra": deep}}) + "\n" + json.dumps(TASKS_RESPONSE) + "\n")
    ctx = ReadContext(path)
    rows = list(read_rest_json(path, ctx))
    assert not ctx.skipped
    assert [j["job_id"] for j in table(rows, "jobs")] == [JOB]
    assert json.loads(table(rows, "events")[0]["payload_json"])["job"]["extra"] == deep
    assert len(table(rows, "tasks")) == 2


def test_an_unreadable_item_of_a_response_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    tasks = copy.deepcopy(TASKS_RESPONSE)
    tasks["tasks"]["task"].insert(1, {"id": "task_1700000000000_0042_m_000009", "startTime": "noon"})
    counters = copy.deepcopy(JOB_COUNTERS)
    group = counters["jobCounters"]["counterGroup"][0]
    group["counter"].insert(0, {"name": "SPILLED_RECORDS", "totalCounterValue": "many"})
    counters["jobCounters"]["counterGroup"].append({"counter": []})  # a group without its name
    task_counters = copy.deepcopy(TASK_COUNTERS)
    task_counters["jobTaskCounters"]["taskCounterGroup"][0]["counter"].append({"name": "X", "value": True})
    conf = copy.deepcopy(CONF_RESPONSE)
    conf["conf"]["property"].insert(0, {"value": "nameless"})
    path = write(tmp_path, tasks, counters, task_counters, conf)
    ctx = ReadContext(path)
    rows = list(read_rest_json(path, ctx))
    assert [e.message for e in ctx.skipped] == [
        "task_1700000000000_0042_m_000009.startTime = 'noon' is not a 64-bit integer",
        "org.apache.hadoop.mapreduce.TaskCounter.SPILLED_RECORDS.totalCounterValue = 'many' is not a 64-bit integer",
        "a counterGroup has no counterGroupName",
        "org.apache.hadoop.mapreduce.FileSystemCounter.X is a boolean, not a number",
        "a conf property has no name",
    ]
    pristine = read(write(tmp_path, TASKS_RESPONSE, JOB_COUNTERS, TASK_COUNTERS, CONF_RESPONSE, name="p.json"))
    for name in ("tasks", "counters", "conf"):
        assert table(rows, name) == table(pristine, name), name
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert "5 unreadable records skipped" in (result.error or "")


SEED = ("\n".join(json.dumps(d, indent=1) for d in ALL) + "\n").encode()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated=mutations(SEED))
def test_mutated_responses_raise_only_phaseline_errors(fuzz_dir: Path, mutated: bytes) -> None:
    path = fuzz_dir / "mutated.json"
    path.write_bytes(mutated)
    assert sniff_rest_json(SEED, path)
    error = read_checked(read_rest_json, path)
    assert error is None or str(path) in str(error)


def test_a_quarantine_message_names_the_file_once_given_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It had read '/abs/dir//abs/dir/bad/r.json:1: ...' (the store key put in twice)
    (tmp_path / "bad").mkdir()
    write(tmp_path / "bad", {"task": {"id": "t1", "type": "MAP"}})
    monkeypatch.chdir(tmp_path)
    (result,) = ingest_paths([Path("bad/r.json")], Store(tmp_path / "store")).results
    assert result.status == "quarantined"
    assert (result.error or "").startswith(f"{tmp_path / 'bad' / 'r.json'}:1: cannot tell the job of t1")
