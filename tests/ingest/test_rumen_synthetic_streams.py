"""Hand-written Rumen streams: concatenated objects, a cut stream, unreadable jobs skipped and named."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from reader_checks import table

from ingest.base import ReadContext, Row
from ingest.rumen import read_rumen
from phaseline.errors import TraceTruncatedError
from tests.ingest.rumen_helpers import read

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
        (
            '{"jobID": "j", "submitTime": 1e30}\n',
            1,
            "submitTime = 1e+30 does not fit in 64 bits",
        ),  # had been NULL
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
    assert [t["task_id"] for t in table(rows, "tasks") if t["job_id"] == "job_9_0001"] == [
        "task_9_0001_m_000000"
    ]
