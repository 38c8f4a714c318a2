"""Hadoop 0.18 history, whose records end without the ' .' that 0.20/1.x records still need."""

from __future__ import annotations

from pathlib import Path

from reader_checks import table

from ingest.base import ReadContext
from ingest.formats import detect
from ingest.history_v1 import FORMATS, read_history_v1
from ingest.opening import read_head

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
    assert (
        counters[("task", "task_200811041125_0003_m_000000", "File Systems", "HDFS bytes read")] == 67108864
    )
    assert counters[("job_total", None, "Map-Reduce Framework", "Map input records")] == 1500
    assert len(counters) == 10


def test_a_v1_history_still_refuses_a_record_line_without_its_delimiter(tmp_path: Path) -> None:
    path = tmp_path / "h"
    path.write_text(
        'Meta VERSION="1" .\nJob JOBID="job_1_0001" USER="u"\nJob JOBID="job_1_0001" JOBNAME="n" .\n'
    )
    ctx = ReadContext(path)
    rows = list(read_history_v1(path, ctx))
    assert [e.line for e in ctx.skipped] == [2]
    assert "does not end in ' .'" in str(ctx.skipped[0])
    assert table(rows, "jobs")[0]["hadoop_version"] == "0.20/1.x"
