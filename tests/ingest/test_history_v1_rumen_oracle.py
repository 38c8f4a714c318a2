"""Hadoop 0.20/1.x text history read as Rumen's own parse of the same logs reads it."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reader_checks import table

from ingest.mrcommon import unescape_v1
from phaseline.hadoop_names import split_rack_host
from tests.ingest.history_v1_helpers import RUMEN_TEST, read

ORACLE_PAIRS = [
    ("sample-job-tracker-logs.gz", "job-tracker-logs-trace-output.gz"),
    ("truncated-job-tracker-log", "truncated-trace-output"),
]


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
