"""Profiles of mumak's Rumen trace (19 jobs): attempts that end before they start, and failed jobs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from profiles import queries as q
from profiles.extract import extract_profile
from profiles.timeline_plot import chrome_trace
from tests.profiles.profiles_doubles import _rumen_trace_jobs

# ---------------------------------------------------------------- attempts that end before they start
#: mumak's Rumen trace (19 jobs): three failed reduces finish before they start (Rumen's own CDF in the
#: file has a minimum of -79,854 ms); the store keeps their times as written.
MUMAK_JOB = "job_200904211745_0014"


def _mumak_attempts(fixtures_dir: Path, job_id: str) -> list[dict[str, Any]]:
    """The job's attempts as the trace file has them, read with the standard library."""
    job = _rumen_trace_jobs(fixtures_dir / "apache-hadoop-mapreduce" / "mumak" / "19-jobs.trace.json.gz")[
        job_id
    ]
    return [
        a | {"taskType": t["taskType"]} for t in job["mapTasks"] + job["reduceTasks"] for a in t["attempts"]
    ]


def test_attempts_that_end_before_they_start_have_no_duration_anywhere(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    from phaseline.verify import verify_store

    store = Store(tmp_path / "store")
    mumak = fixtures_dir / "apache-hadoop-mapreduce" / "mumak" / "19-jobs.trace.json.gz"
    assert [r.status for r in ingest_paths([mumak], store).results] == ["landed"]
    con = store.connect()
    raw = _mumak_attempts(fixtures_dir, MUMAK_JOB)
    backwards = {a["attemptID"] for a in raw if a["finishTime"] < a["startTime"]}
    assert len(backwards) == 2
    timeline = q.timeline(con, MUMAK_JOB)
    kept = timeline[timeline["attempt_id"].isin(backwards)]
    assert len(kept) == 2
    assert kept["dur_ms"].isna().all()
    assert (timeline["dur_ms"].dropna() >= 0).all()
    # wasted time: every failed or killed attempt's span, those without a duration left out
    wasted = q.wasted(con, MUMAK_JOB)
    assert wasted.loc[wasted["attempt_id"].isin(backwards), "wasted_ms"].isna().all()
    expected: Counter[tuple[str, str]] = Counter()
    for a in raw:
        if a["result"] in ("FAILED", "KILLED") and a["finishTime"] >= a["startTime"] > 0:
            expected[(a["taskType"], a["result"])] += a["finishTime"] - a["startTime"]
    summary = q.wasted_summary(con, MUMAK_JOB)
    got = {
        (t, s): int(w)
        for t, s, w in zip(summary["task_type"], summary["status"], summary["wasted_ms"], strict=True)
    }
    groups = {(a["taskType"], a["result"]) for a in raw if a["result"] in ("FAILED", "KILLED")}
    assert got == {k: expected[k] for k in groups}
    assert got[("REDUCE", "FAILED")] == 703_127  # not 600,133: the two backwards spans no longer subtract
    # the Chrome trace and the Gantt chart draw only attempts with a duration
    trace = chrome_trace(timeline, q.phases(con, MUMAK_JOB), job_id=MUMAK_JOB)
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert spans
    assert min(e["dur"] for e in spans) >= 0
    assert not backwards & {e["name"] for e in spans}
    # and verify says so
    said = [f.detail for f in verify_store(store).findings if f.check == "times" and f.subject == MUMAK_JOB]
    assert any("2 attempt(s) finish before they start" in m for m in said)


def test_a_failed_job_is_profiled_with_a_warning_that_says_what_is_missing(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    # mumak's job_200904211745_0007 failed: 1,106 of its 3,204 maps succeeded, and its profile (the
    # default input of a prediction) holds only those; it had been written without a word.
    from phaseline.errors import DataQualityWarning

    store = Store(tmp_path / "store")
    ingest_paths([fixtures_dir / "apache-hadoop-mapreduce" / "mumak" / "19-jobs.trace.json.gz"], store)
    with pytest.warns(
        DataQualityWarning, match="failed: its profile holds the 1106 maps that succeeded of 3204"
    ):
        profile = extract_profile(store.connect(), "job_200904211745_0007")
    assert profile.input.splits == 1106
    # job_200904211745_0020 failed in its reduces: every map succeeded, 99 of 101 reduces; the warning had
    # said "the 329 maps that succeeded of 329, so its input and times are not the whole job's"
    with pytest.warns(DataQualityWarning) as said:
        extract_profile(store.connect(), "job_200904211745_0020")
    (message,) = [str(w.message) for w in said if "failed" in str(w.message)]
    assert (
        "holds the 329 maps that succeeded of 329 and the 99 reduces of 101, so its reduce times are not"
        in message
    )
