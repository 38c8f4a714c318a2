"""`yarn logs` output of three real Hadoop 3.4.1 jobs, ingested end to end into a store."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ingest.phases.spans import COVERAGE_TOLERANCE_MS
from ingest.pipeline import ingest_paths
from phaseline.store import Store
from tests.ingest.yarn_logs_helpers import FOLDER, TERAGEN, TERASORT, TERAVALIDATE, _raw

TASK = "org.apache.hadoop.mapreduce.TaskCounter"


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory, fixtures_dir: Path) -> Any:
    store = Store(tmp_path_factory.mktemp("yarn") / "store")
    summary = ingest_paths([fixtures_dir / FOLDER], store)
    assert summary.quarantined == 0
    return store.connect()


def q(con: Any, sql: str, *params: object) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in con.execute(sql, list(params)).fetchall()]


def test_jobs_land_with_status_sizes_and_version(con: Any) -> None:
    rows = q(
        con,
        'SELECT job_id, status, total_maps, total_reduces, hadoop_version, "user", source_format '
        "FROM jobs ORDER BY job_id",
    )
    assert rows == [
        ("job_1756057717712_0001", "SUCCEEDED", 2, 0, "3.4.1", "sandbox", "yarn-aggregated-logs"),
        ("job_1756057717712_0002", "SUCCEEDED", 76, 1, "3.4.1", "sandbox", "yarn-aggregated-logs"),
        ("job_1756057717712_0003", "SUCCEEDED", 1, 1, "3.4.1", "sandbox", "yarn-aggregated-logs"),
    ]
    # submit time: APP_SUBMIT_TIME_ENV of the AM's launch script; finish: JobImpl's last transition
    (sort_job,) = q(
        con, "SELECT submit_ms, launch_ms, finish_ms FROM jobs WHERE job_id = 'job_1756057717712_0002'"
    )
    assert sort_job[0] == 1756058294334
    assert sort_job[0] < sort_job[1] < sort_job[2]


def test_job_times_and_counts_are_the_done_names(con: Any, fixtures_dir: Path) -> None:
    # the AM's transition lines are a few ms off the history's own times, which the done name holds
    for name in (TERAGEN, TERASORT, TERAVALIDATE):
        (done,) = set(
            re.findall(
                r"(job_\d+_\d+)-(\d+)-[^-]+-[^-]+-(\d+)-(\d+)-(\d+)-SUCCEEDED-[^-]+-(\d+)\.jhist",
                _raw(fixtures_dir, name),
            )
        )
        job_id, submit, finish, maps, reduces, launch = done
        got = q(
            con,
            "SELECT submit_ms, launch_ms, finish_ms, finished_maps, finished_reduces FROM jobs "
            "WHERE job_id = ?",
            job_id,
        )
        assert got == [(int(submit), int(launch), int(finish), int(maps), int(reduces))]


def test_jobs_are_named_from_the_history_files_done_name(con: Any) -> None:
    # No log line names the job or its queue but the AM's "Moved tmp to done: ...-TeraGen-...-root.default-..."
    rows = q(con, "SELECT job_id, name, queue FROM jobs ORDER BY job_id")
    assert rows == [
        ("job_1756057717712_0001", "TeraGen", "root.default"),
        ("job_1756057717712_0002", "TeraSort", "root.default"),
        ("job_1756057717712_0003", "TeraValidate", "root.default"),
    ]


def test_every_task_container_becomes_one_attempt(con: Any, fixtures_dir: Path) -> None:
    for name, job, maps, reduces in (
        (TERAGEN, "0001", 2, 0),
        (TERASORT, "0002", 76, 1),
        (TERAVALIDATE, "0003", 1, 1),
    ):
        launched = set(re.findall(r"YarnChild \S+ \d+ (attempt_\S+) \d+", _raw(fixtures_dir, name)))
        rows = q(
            con,
            "SELECT attempt_id, task_type, status, host, container_id FROM attempts WHERE job_id = ?",
            f"job_1756057717712_{job}",
        )
        assert {r[0] for r in rows} == launched
        assert sum(r[1] == "MAP" for r in rows) == maps
        assert sum(r[1] == "REDUCE" for r in rows) == reduces
        assert {r[2] for r in rows} == {"SUCCEEDED"}
        assert {r[3] for r in rows} == {"hadoopnode"}
        assert all(str(r[4]).startswith(f"container_1756057717712_{job}_01_") for r in rows)
    assert q(con, "SELECT count(*) FROM tasks")[0][0] == 2 + 77 + 2


def test_final_counters_land_per_attempt(con: Any) -> None:
    def counter(attempt: str, name: str) -> int:
        return int(
            q(
                con,
                "SELECT value FROM counters WHERE scope = 'attempt' AND attempt_id = ? "
                "AND group_name = ? AND counter_name = ?",
                attempt,
                TASK,
                name,
            )[0][0]
        )

    assert counter("attempt_1756057717712_0001_m_000000_0", "MAP_INPUT_RECORDS") == 50_000_000
    reduce = "attempt_1756057717712_0002_r_000000_0"
    assert counter(reduce, "REDUCE_SHUFFLE_BYTES") == 10_400_000_456
    assert counter(reduce, "SHUFFLED_MAPS") == 76
    assert counter(reduce, "REDUCE_OUTPUT_RECORDS") == 100_000_000
    # 77 TeraSort attempts each printed their counters: 28 per map, 35 for the reduce (Counters: N)
    per_attempt = q(
        con,
        "SELECT attempt_id, count(*) FROM counters WHERE scope = 'attempt' AND job_id = ? GROUP BY 1",
        "job_1756057717712_0002",
    )
    assert len(per_attempt) == 77
    assert {n for a, n in per_attempt if "_m_" in a} == {28}
    assert {n for a, n in per_attempt if "_r_" in a} == {35}


def test_terasort_maps_spill_and_merge_as_the_log_says(con: Any, fixtures_dir: Path) -> None:
    raw = _raw(fixtures_dir, TERASORT)
    finished = q(
        con,
        "SELECT count(*) FROM attempt_events WHERE kind = 'spill_finish' AND job_id = ?",
        "job_1756057717712_0002",
    )
    assert finished[0][0] == raw.count("MapTask: Finished spill ")
    rows = q(
        con,
        """
        SELECT e.attempt_id,
               count(*) FILTER (WHERE kind = 'spill_finish'),
               count(*) FILTER (WHERE kind = 'spill_finish' AND thread_name = 'SpillThread'),
               sum(bytes) FILTER (WHERE kind = 'spill_bytes'),
               sum(records) FILTER (WHERE kind = 'spill_records'),
               max(segments) FILTER (WHERE kind = 'merge_pass')
        FROM attempt_events e WHERE e.job_id = 'job_1756057717712_0002' AND e.attempt_id LIKE '%\\_m\\_%' ESCAPE '\\'
        GROUP BY 1""",
    )
    counters = dict(
        q(
            con,
            "SELECT attempt_id || '/' || counter_name, value FROM counters WHERE scope = 'attempt' "
            "AND counter_name IN ('MAP_OUTPUT_BYTES', 'MAP_OUTPUT_RECORDS')",
        )
    )
    assert len(rows) == 76
    two_spills = 0
    for attempt, spills, background, spilled_bytes, spilled_records, merged in rows:
        assert spilled_bytes == counters[f"{attempt}/MAP_OUTPUT_BYTES"]
        assert spilled_records == counters[f"{attempt}/MAP_OUTPUT_RECORDS"]
        assert background == spills - 1  # the last spill runs on the task thread after the flush
        assert merged == (spills if spills > 1 else None)
        two_spills += spills == 2
    assert two_spills == 74  # the two last splits are small: one spill, no merge


def test_terasort_reduce_shuffles_merges_in_memory_and_merges_15_files(con: Any, fixtures_dir: Path) -> None:
    raw = _raw(fixtures_dir, TERASORT)
    reduce = "attempt_1756057717712_0002_r_000000_0"
    kinds = dict(q(con, "SELECT kind, count(*) FROM attempt_events WHERE attempt_id = ? GROUP BY 1", reduce))
    assert kinds["fetch_start"] == raw.count("about to shuffle output of map") == 76
    assert kinds["inmem_merge_done"] == raw.count("files in-memory complete") == 15
    assert kinds["final_merge"] == 1
    (detail,) = q(
        con, "SELECT detail FROM attempt_events WHERE attempt_id = ? AND kind = 'final_merge'", reduce
    )
    assert detail[0] == "on_disk=15"
    fetched = q(
        con,
        "SELECT sum(CAST(regexp_extract(detail, 'len=(\\d+)', 1) AS BIGINT)) FROM attempt_events "
        "WHERE attempt_id = ? AND kind = 'fetch_start' AND detail LIKE '%target=MEMORY%'",
        reduce,
    )
    assert fetched[0][0] == 10_400_000_456  # = REDUCE_SHUFFLE_BYTES: every map output went to memory
    phases = q(
        con,
        "SELECT phase, lane, dur_ms, data_bytes FROM attempt_phases WHERE attempt_id = ? "
        "ORDER BY lane DESC, start_ms",
        reduce,
    )
    assert [p[0] for p in phases if p[1] == "main"] == [
        "setup",
        "wait",
        "shuffle",
        "sort",
        "reduce+write",
        "commit",
        "other",
    ]
    by_name = {(p[0], p[1]): p for p in phases}
    assert by_name[("shuffle", "main")][3] == 10_400_000_456
    assert by_name[("sort", "main")][3] == 10_400_000_090  # 'Merging 15 files, 10400000090 bytes from disk'
    assert by_name[("reduce+write", "main")][3] == 10_000_000_000
    background = by_name[("merge", "background")]
    assert 0 < background[2] <= by_name[("shuffle", "main")][2]  # the in-memory merges ran while shuffling
    # Hadoop's sort begins when Shuffle.run stops the event fetcher (18:00:04,655), not at finalMerge
    # (18:00:06,261): the 1.6 s between is MergeManager.close waiting for the last in-memory merge
    ((final_ms,),) = q(
        con, "SELECT ts_ms FROM attempt_events WHERE attempt_id = ? AND kind = 'final_merge'", reduce
    )
    ((sort_ms, shuffle_end_ms),) = q(
        con, "SELECT s.start_ms, h.end_ms FROM attempt_phases s, attempt_phases h WHERE s.attempt_id = ? "
             "AND h.attempt_id = s.attempt_id AND s.phase = 'sort' AND h.phase = 'shuffle' AND h.lane = 'main'",
        reduce)  # fmt: skip
    assert final_ms - sort_ms == 1606
    assert shuffle_end_ms == sort_ms
    ((shuffle_finish_ms,),) = q(con, "SELECT shuffle_finish_ms FROM attempts WHERE attempt_id = ?", reduce)
    assert shuffle_finish_ms == sort_ms


def test_teravalidate_shuffles_in_memory(con: Any) -> None:
    reduce = "attempt_1756057717712_0003_r_000000_0"
    fetches = q(
        con, "SELECT bytes, detail FROM attempt_events WHERE attempt_id = ? AND kind = 'fetch_start'", reduce
    )
    assert len(fetches) == 1
    assert "target=MEMORY" in fetches[0][1]
    (final,) = q(
        con,
        "SELECT segments, detail FROM attempt_events WHERE attempt_id = ? AND kind = 'final_merge'",
        reduce,
    )
    assert final == (1, "on_disk=0")  # 'finalMerge called with 1 in-memory map-outputs and 0 on-disk'


def test_phases_of_every_attempt_are_non_negative_and_cover_its_span(con: Any) -> None:
    bad = q(con, "SELECT attempt_id, phase FROM attempt_phases WHERE dur_ms < 0 OR end_ms < start_ms")
    assert bad == []
    gaps = q(
        con,
        """
        WITH main AS (SELECT * FROM attempt_phases WHERE lane = 'main'),
        ordered AS (SELECT attempt_id, start_ms, end_ms,
                           lag(end_ms) OVER (PARTITION BY attempt_id ORDER BY start_ms, end_ms) AS prev_end
                    FROM main)
        SELECT a.attempt_id, sum(m.dur_ms) AS covered, a.finish_ms - a.start_ms AS span,
               min(m.start_ms) - a.start_ms AS head, a.finish_ms - max(m.end_ms) AS tail,
               (SELECT count(*) FROM ordered o WHERE o.attempt_id = a.attempt_id AND o.prev_end > o.start_ms) AS n_overlaps
        FROM attempts a JOIN main m USING (attempt_id)
        GROUP BY a.attempt_id, a.start_ms, a.finish_ms
        HAVING abs(covered - span) > ? OR head <> 0 OR tail <> 0 OR n_overlaps > 0""",
        COVERAGE_TOLERANCE_MS,
    )
    assert gaps == []
    assert q(con, "SELECT count(DISTINCT attempt_id) FROM attempt_phases")[0][0] == 2 + 77 + 2


def test_non_log_files_and_the_application_master_land_as_events(con: Any, fixtures_dir: Path) -> None:
    types = dict(
        q(
            con,
            "SELECT json_extract_string(payload_json, '$.log_type'), count(*) FROM events "
            "WHERE event_type = 'container_log' GROUP BY 1",
        )
    )
    raw = "".join(_raw(fixtures_dir, name) for name in (TERAGEN, TERASORT, TERAVALIDATE))
    for log_type in ("stderr", "stdout", "prelaunch.err", "launch_container.sh", "directory.info"):
        assert types[log_type] == raw.count(f"\nLogType:{log_type}\n")
    assert "syslog" not in types  # syslogs are parsed, not kept as text
    am_lines = q(con, "SELECT count(*) FROM events WHERE event_type = 'am_log'")[0][0]
    assert am_lines > 1000


def test_phases_name_their_lane_so_background_work_reads_right(con: Any) -> None:
    # TeraSort's reduce: its background merges span 67.8 s of the shuffle but worked 34.4 s of it;
    # without the lane, a row whose dur_ms is not end - start read like an error
    from profiles import queries

    df = queries.phases(con, "job_1756057717712_0002")
    assert set(df["lane"]) == {"main", "background"}
    main = df[df["lane"] == "main"]
    assert (main["dur_ms"] == main["end_ms"] - main["start_ms"]).all()
    merge = df[(df["task_type"] == "REDUCE") & (df["phase"] == "merge") & (df["lane"] == "background")]
    assert not merge.empty
    assert (merge["dur_ms"] <= merge["end_ms"] - merge["start_ms"]).all()
    assert (merge["dur_ms"] < merge["end_ms"] - merge["start_ms"]).any()


def test_phase_shares_are_of_the_task_thread_time(con: Any, tmp_path: Path) -> None:
    # TeraSort's reduce spent 34.4 s in background merges beside its main-lane phases; summed in,
    # they put the reduce's shuffle at 40 % in the report (50 % of its time) and shares past 100 %
    from profiles import queries
    from profiles.analyze import analyze_job
    from profiles.report import render_report

    job = "job_1756057717712_0002"
    df = queries.phases(con, job)
    ok = df[(df["status"] == "SUCCEEDED") & (df["lane"] == "main") & (df["task_type"] == "REDUCE")]
    shuffle_share = ok.loc[ok["phase"] == "shuffle", "dur_ms"].sum() / ok["dur_ms"].sum()
    assert 0.45 < shuffle_share < 0.55
    page = render_report(con, job)
    rows = re.findall(r"<tr><td>(MAP|REDUCE)</td><td>(main|background)</td><td>([^<]+)</td>(.*?)</tr>", page)
    shares: dict[tuple[str, str], list[float]] = {}
    for kind, lane, phase, rest in rows:
        cell = re.findall(r"<td[^>]*>([^<]*)</td>", rest)[-1]
        shares.setdefault((kind, lane), []).append(float(cell) if cell else float("nan"))
        if (kind, lane, phase) == ("REDUCE", "main", "shuffle"):
            assert float(cell) == pytest.approx(shuffle_share, abs=0.001)
    assert sum(shares[("MAP", "main")]) == pytest.approx(1, abs=0.01)
    assert sum(shares[("REDUCE", "main")]) == pytest.approx(1, abs=0.01)
    assert ("REDUCE", "background") in shares  # listed, with no share
    assert all(s != s for s in shares[("REDUCE", "background")])
    top = analyze_job(con, job, tmp_path).top_phases
    assert sum(int(p.rsplit(" ", 1)[1].rstrip("%")) for p in top.split(", ")) <= 100


def test_profile_phases_come_from_the_task_type_that_runs_them(con: Any) -> None:
    # TeraSort: 76 map merges (~0.7 s each) and one reduce's 34 s of background merging share the
    # name "merge"; the profile's merge is the map merge a predictor scales (it was 1.16 s, mixed)
    from profiles import queries
    from profiles.extract import extract_profile

    job = "job_1756057717712_0002"
    df = queries.phases(con, job)
    ok = df[df["status"] == "SUCCEEDED"]
    map_merge = (
        ok[(ok["task_type"] == "MAP") & (ok["phase"] == "merge")].groupby("attempt_id")["dur_ms"].sum()
    )
    assert len(map_merge) == 76
    assert not ok[(ok["task_type"] == "REDUCE") & (ok["phase"] == "merge")].empty
    phases = extract_profile(con, job).phases
    assert phases["merge"].count == 76
    assert phases["merge"].avg_ms == pytest.approx(map_merge.mean())
    assert phases["shuffle"].count == 1  # reduce side: the one reduce
    assert phases["spill"].count == 76
