"""Profiles on real traces: a Hadoop 2 Sleep job (.jhist) and Yahoo's 0.20 job-tracker history.

References are independent of phaseline's readers: the .jhist's own events
decoded with the standard library, Hadoop's JobHistoryParser (the JVM oracle),
and Rumen's parse of the 0.20 logs that ships beside them.  One store of both
serves the module (and the CLI on it).
"""

from __future__ import annotations

import itertools
import json
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from ingest.pipeline import ingest_paths
from phaseline.cli import main
from phaseline.errors import DataQualityWarning
from phaseline.store import Store
from profiles import queries as q
from profiles.critical_path import critical_path
from profiles.extract import extract_profile
from profiles.profile import JobProfile
from profiles.timeline_plot import chrome_trace
from tests.profiles.profiles_doubles import _rumen_trace_jobs

SLEEP = "job_1329348432655_0001"
YAHOO = "job_200904211745_0004"
WORDCOUNT = "job_200904211745_0002"


def _sleep_path(fixtures_dir: Path) -> Path:
    return fixtures_dir / "apache-hadoop" / "mapreduce-client-jobclient" / "job_1329348432655_0001-10.jhist"


def _rumen_dir(fixtures_dir: Path) -> Path:
    return fixtures_dir / "apache-hadoop-mapreduce" / "rumen-small-trace-test"


@pytest.fixture(scope="module")
def store(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(tmp_path_factory.mktemp("profiles-real") / "store")
    summary = ingest_paths(
        [_sleep_path(fixtures_dir), _rumen_dir(fixtures_dir) / "sample-job-tracker-logs.gz"], store
    )
    assert all(r.status == "landed" for r in summary.results), [(r.path, r.error) for r in summary.results]
    return store


@pytest.fixture(scope="module")
def con(store: Store) -> duckdb.DuckDBPyConnection:
    return store.connect()


def _expected_history_phases(
    start: int, finish: int, map_finish: int | None, shuffle: int | None, sort: int | None
) -> list[tuple[str, int, int]]:
    if shuffle is not None:
        return [
            ("shuffle", start, shuffle),
            ("sort", shuffle, sort or shuffle),
            ("reduce+write", sort or shuffle, finish),
        ]
    assert map_finish is not None
    return [("map", start, map_finish), ("spill+merge", map_finish, finish)]


def _raw_jhist_times(path: Path) -> dict[str, dict[str, int]]:
    """Attempt times straight from the .jhist events (json module, not phaseline's reader)."""
    times: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[2:]:
        if not line.strip():
            continue
        event = json.loads(line)
        (payload,) = event["event"].values()
        if "attemptId" not in payload:
            continue
        t = times.setdefault(payload["attemptId"], {})
        if event["type"].endswith("ATTEMPT_STARTED"):
            t["start"] = payload["startTime"]
        elif event["type"] in ("MAP_ATTEMPT_FINISHED", "REDUCE_ATTEMPT_FINISHED"):
            t["finish"] = payload["finishTime"]
            for key in ("mapFinishTime", "shuffleFinishTime", "sortFinishTime"):
                if key in payload:
                    t[key] = payload[key]
    return times


def _phase_rows(con: duckdb.DuckDBPyConnection, job_id: str) -> dict[str, list[tuple[str, int, int]]]:
    df = q.phases(con, job_id).sort_values(["attempt_id", "seq"])
    out: dict[str, list[tuple[str, int, int]]] = {}
    for a, p, s, e in zip(df["attempt_id"], df["phase"], df["start_ms"], df["end_ms"], strict=True):
        out.setdefault(str(a), []).append((str(p), int(s), int(e)))
    return out


def test_sleep_job_phases_equal_the_jhist_times(con: duckdb.DuckDBPyConnection, fixtures_dir: Path) -> None:
    raw = _raw_jhist_times(_sleep_path(fixtures_dir))
    got = _phase_rows(con, SLEEP)
    assert set(got) == set(raw)
    for attempt_id, t in raw.items():
        expected = _expected_history_phases(
            t["start"],
            t["finish"],
            t.get("mapFinishTime"),
            t.get("shuffleFinishTime"),
            t.get("sortFinishTime"),
        )
        assert got[attempt_id] == expected, attempt_id
    reduce_rows = [rows for a, rows in got.items() if "_r_" in a]
    assert reduce_rows == [
        [("shuffle", 1329348464995, 1329348468462), ("sort", 1329348468462, 1329348468517),
         ("reduce+write", 1329348468517, 1329348468600)]
    ]  # fmt: skip


@pytest.mark.slow
def test_sleep_job_phases_equal_hadoops_parser(con: duckdb.DuckDBPyConnection, fixtures_dir: Path) -> None:
    from oracle_util import hadoop_parse

    path = _sleep_path(fixtures_dir)
    parsed = hadoop_parse([path])[str(path)]
    got = _phase_rows(con, SLEEP)
    checked = 0
    for task in parsed["tasks"]:
        for a in task["attempts"]:
            if a["task_type"] not in ("MAP", "REDUCE"):
                continue
            expected = _expected_history_phases(
                a["start_ms"],
                a["finish_ms"],
                a["map_finish_ms"] if a["task_type"] == "MAP" else None,
                a["shuffle_finish_ms"] if a["task_type"] == "REDUCE" else None,
                a["sort_finish_ms"] if a["task_type"] == "REDUCE" else None,
            )
            assert got[a["attempt_id"]] == expected
            checked += 1
    assert checked == 11


def _rumen_jobs(fixtures_dir: Path) -> dict[str, dict[str, Any]]:
    return _rumen_trace_jobs(_rumen_dir(fixtures_dir) / "job-tracker-logs-trace-output.gz")


def test_yahoo_job_wasted_time_equals_rumens_parse(
    con: duckdb.DuckDBPyConnection, fixtures_dir: Path
) -> None:
    job = _rumen_jobs(fixtures_dir)[YAHOO]
    expected_n: Counter[tuple[str, str]] = Counter()
    expected_ms: Counter[tuple[str, str]] = Counter()
    for task in job["mapTasks"] + job["reduceTasks"]:
        for a in task["attempts"]:
            if a["result"] in ("KILLED", "FAILED"):
                expected_n[(task["taskType"], a["result"])] += 1
                expected_ms[(task["taskType"], a["result"])] += a["finishTime"] - a["startTime"]
    summary = q.wasted_summary(con, YAHOO)
    got_n = {
        (t, s): int(n)
        for t, s, n in zip(summary["task_type"], summary["status"], summary["attempts"], strict=True)
    }
    got_ms = {
        (t, s): int(w)
        for t, s, w in zip(summary["task_type"], summary["status"], summary["wasted_ms"], strict=True)
    }
    assert got_n == dict(expected_n)
    assert got_ms == dict(expected_ms)
    assert sum(n for (_, s), n in got_n.items() if s == "KILLED") == 69


def test_yahoo_job_summary_and_waves(con: duckdb.DuckDBPyConnection) -> None:
    s = q.require_job(con, YAHOO)
    assert (s["maps"], s["reduces"], s["killed_attempts"]) == (131, 47, 69)
    waves = q.waves(con, YAHOO)
    timeline = q.timeline(con, YAHOO)
    for task_type in ("MAP", "REDUCE"):
        w = waves[waves["task_type"] == task_type]
        timed = timeline[(timeline["task_type"] == task_type) & timeline["finish_ms"].notna()]
        assert w["attempts"].sum() == len(timed)  # every timed attempt in exactly one wave
        assert list(w["wave"]) == list(range(1, len(w) + 1))
        assert (w["attempts"] <= w["slots"]).all()
        assert w["first_start_ms"].is_monotonic_increasing
        assert w["succeeded"].sum() == (131 if task_type == "MAP" else 47)
    # 200 timed map attempts on at most 125 concurrent slots: two map waves, one reduce wave
    assert list(waves["task_type"]) == ["MAP", "MAP", "REDUCE"]
    # the reduces started after a few maps (slow-start) and their shuffles ended after the last map
    slow = q.slowstart(con, YAHOO).iloc[0]
    assert 0 < slow["slowstart_observed"] < 0.5
    gap = q.shuffle_gap(con, YAHOO).iloc[0]
    assert 0 < gap["gap_ms"] < gap["job_span_ms"]


def test_critical_paths_of_real_jobs_fit_their_makespans(con: duckdb.DuckDBPyConnection) -> None:
    for job_id in (SLEEP, YAHOO, WORDCOUNT):
        cp = critical_path(con, job_id)
        summary = q.require_job(con, job_id)
        assert cp.makespan_ms == summary["makespan_ms"]
        assert cp.length_ms <= cp.makespan_ms
        assert 0 < cp.busy_ms <= cp.makespan_ms
        assert cp.attempts, job_id
    sleep = critical_path(con, SLEEP)
    # the last reduce is on the path, fed by the last map output it waited for
    assert sleep.attempts[-1] == "attempt_1329348432655_0001_r_000000_0"
    assert sleep.attempts[-2] == "attempt_1329348432655_0001_m_000008_0"  # the map that finished last


def test_profiles_of_real_jobs_round_trip(con: duckdb.DuckDBPyConnection) -> None:
    p = extract_profile(con, YAHOO)
    assert (p.num_maps, p.num_reduces, p.input.splits) == (131, 47, 131)
    counters = q.counter_totals(con, YAHOO).set_index("task_type")
    assert p.map_recs_sel == pytest.approx(
        counters.loc["MAP", "map_output_records"] / counters.loc["MAP", "map_input_records"]
    )
    # every successful map is counted: in the typical map's statistics or as left out of them
    assert p.stages["map_task"].count + p.map_tasks_left_out == 131
    assert 0 < p.map_tasks_left_out < 131
    assert p.map_one_time_ms is not None
    assert p.map_one_time_ms > 0
    # 0.20 names the job's input bytes MAP_INPUT_BYTES (no FileInputFormat BYTES_READ); it was left null
    job_counters = q.job_counters(con, YAHOO)
    (input_bytes,) = job_counters[
        (job_counters["scope"] == "job_total") & (job_counters["counter_name"] == "MAP_INPUT_BYTES")
    ]["value"]
    assert p.counters.map_input_bytes == input_bytes > 0
    assert p.map_ms_per_record is None  # history times cannot isolate the map function
    assert JobProfile.from_json(p.to_json()) == p
    # the Sleep job reads no input bytes: its maps make their records (SleepInputFormat), so it is profiled
    # as a generator, its input the bytes its 10 maps emitted (4 each), and it says so
    with warnings.catch_warnings(record=True) as said:  # (its one-time cost is warned of too)
        warnings.simplefilter("always", DataQualityWarning)
        sleep = extract_profile(con, SLEEP)
    assert any("read no input but made 10 records" in str(w.message) for w in said)
    assert sleep.map_size_sel == 1.0
    assert (sleep.input.splits, sleep.input.avg_split_bytes, sleep.input.avg_split_records) == (10, 4.0, 1.0)


def test_chrome_trace_of_the_yahoo_job(con: duckdb.DuckDBPyConnection) -> None:
    trace = chrome_trace(q.timeline(con, YAHOO), q.phases(con, YAHOO), job_id=YAHOO)
    events = trace["traceEvents"]
    attempts = [e for e in events if e["ph"] == "X" and e["cat"] != "phase"]
    assert len(attempts) == len(q.timeline(con, YAHOO).dropna(subset=["start_ms", "finish_ms"]))
    by_thread: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for e in attempts:
        by_thread.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_thread.values():  # attempts on one slot never overlap
        spans.sort()
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    json.dumps(trace)  # serializable as is


# -- the CLI on the real store ------------------------------------------------------------


def test_cli_phases_contract(store: Store) -> None:
    result = CliRunner().invoke(main, ["phases", SLEEP, "--store", str(store.root), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 10 * 2 + 3  # each map: map, spill+merge; the reduce: shuffle, sort, reduce+write
    required = ["attempt_id", "task_type", "phase", "start_ms", "end_ms", "dur_ms", "data_bytes", "source"]
    assert list(rows[0])[: len(required)] == required
    assert {r["source"] for r in rows} == {"history"}
    assert {r["phase"] for r in rows} == {"map", "spill+merge", "shuffle", "sort", "reduce+write"}
    csv_out = CliRunner().invoke(main, ["phases", SLEEP, "--store", str(store.root), "--format", "csv"])
    assert csv_out.stdout.splitlines()[0].startswith(",".join(required))


def test_cli_profile_timeline_report(store: Store, tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["--store", str(store.root)]
    out = tmp_path / "profile.json"
    result = runner.invoke(main, ["profile", YAHOO, "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    assert JobProfile.load(out).num_maps == 131
    # a job named twice is one run, not two to merge (its task counts doubled: 262 map tasks)
    twice = tmp_path / "twice.json"
    result = runner.invoke(main, ["profile", YAHOO, YAHOO, "--out", str(twice), *args])
    assert result.exit_code == 0, result.output
    assert JobProfile.load(twice) == JobProfile.load(out)
    for suffix in ("png", "svg", "json"):
        path = tmp_path / f"timeline.{suffix}"
        result = runner.invoke(main, ["timeline", YAHOO, "--out", str(path), *args])
        assert result.exit_code == 0, result.output
        assert path.stat().st_size > 1000
    assert json.loads((tmp_path / "timeline.json").read_text())["traceEvents"]
    assert (tmp_path / "timeline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html_out = tmp_path / "report.html"
    result = runner.invoke(main, ["report", WORDCOUNT, "--out", str(html_out), *args])
    assert result.exit_code == 0, result.output
    assert "word count" in html_out.read_text()
    result = runner.invoke(main, ["critical-path", SLEEP, *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    makespan = q.require_job(store.connect(), SLEEP)["makespan_ms"]
    assert sum(r["dur_ms"] for r in json.loads(result.stdout)) == makespan


def test_cli_errors_are_clean(store: Store, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["phases", "job_0_0000", "--store", str(store.root)])
    assert result.exit_code != 0
    assert "not in the store" in result.output
    result = runner.invoke(
        main, ["timeline", YAHOO, "--out", str(tmp_path / "x.gif"), "--store", str(store.root)]
    )
    assert result.exit_code == 2  # a usage error
    assert "FILE.png, FILE.svg or FILE.json" in result.output
    # 0.20's job 0001 was killed before any task ran: nothing to profile, said in one line
    result = runner.invoke(
        main,
        ["profile", "job_200904211745_0001", "--out", str(tmp_path / "p.json"), "--store", str(store.root)],
    )
    assert result.exit_code != 0
    assert "no successful map reports its input bytes and records" in result.output
    assert "Traceback" not in result.output
