"""`yarn logs` output of three real Hadoop 3.4.1 jobs, ingested end to end into a store.

Expected values are read off the fixtures by independent means (the raw text,
grep-style) or are the numbers Hadoop itself printed (counters), never our
reader's output.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from ingest.base import ReadContext, Row
from ingest.phases.spans import COVERAGE_TOLERANCE_MS
from ingest.pipeline import ingest_paths
from ingest.yarn_logs import read_yarn_logs, sniff_yarn_logs
from phaseline.errors import TraceParseError
from phaseline.hadoop_names import node_manager_host
from phaseline.store import Store

FOLDER = "splitlog-yarn-logs"
TERAGEN, TERASORT, TERAVALIDATE = (f"application_1756057717712_000{i}.yarn-logs.txt.gz" for i in (1, 2, 3))
TASK = "org.apache.hadoop.mapreduce.TaskCounter"


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory, fixtures_dir: Path) -> Any:
    store = Store(tmp_path_factory.mktemp("yarn") / "store")
    summary = ingest_paths([fixtures_dir / FOLDER], store)
    assert summary.quarantined == 0
    return store.connect()


def _raw(fixtures_dir: Path, name: str) -> str:
    with gzip.open(fixtures_dir / FOLDER / name, "rt", encoding="utf-8") as fh:
        return fh.read()


def q(con: Any, sql: str, *params: object) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in con.execute(sql, list(params)).fetchall()]


def test_jobs_land_with_status_sizes_and_version(con: Any) -> None:
    rows = q(con, "SELECT job_id, status, total_maps, total_reduces, hadoop_version, \"user\", source_format "
                  "FROM jobs ORDER BY job_id")
    assert rows == [
        ("job_1756057717712_0001", "SUCCEEDED", 2, 0, "3.4.1", "sandbox", "yarn-aggregated-logs"),
        ("job_1756057717712_0002", "SUCCEEDED", 76, 1, "3.4.1", "sandbox", "yarn-aggregated-logs"),
        ("job_1756057717712_0003", "SUCCEEDED", 1, 1, "3.4.1", "sandbox", "yarn-aggregated-logs"),
    ]
    # submit time: APP_SUBMIT_TIME_ENV of the AM's launch script; finish: JobImpl's last transition
    (sort_job,) = q(con, "SELECT submit_ms, launch_ms, finish_ms FROM jobs WHERE job_id = 'job_1756057717712_0002'")
    assert sort_job[0] == 1756058294334
    assert sort_job[0] < sort_job[1] < sort_job[2]


def test_job_times_and_counts_are_the_done_names(con: Any, fixtures_dir: Path) -> None:
    # the AM's transition lines are a few ms off the history's own times, which the done name holds
    for name in (TERAGEN, TERASORT, TERAVALIDATE):
        (done,) = set(re.findall(r"(job_\d+_\d+)-(\d+)-[^-]+-[^-]+-(\d+)-(\d+)-(\d+)-SUCCEEDED-[^-]+-(\d+)\.jhist",
                                 _raw(fixtures_dir, name)))
        job_id, submit, finish, maps, reduces, launch = done
        got = q(con, "SELECT submit_ms, launch_ms, finish_ms, finished_maps, finished_reduces FROM jobs "
                     "WHERE job_id = ?", job_id)
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
    for name, job, maps, reduces in ((TERAGEN, "0001", 2, 0), (TERASORT, "0002", 76, 1), (TERAVALIDATE, "0003", 1, 1)):
        launched = set(re.findall(r"YarnChild \S+ \d+ (attempt_\S+) \d+", _raw(fixtures_dir, name)))
        rows = q(con, "SELECT attempt_id, task_type, status, host, container_id FROM attempts "
                      "WHERE job_id = ?", f"job_1756057717712_{job}")
        assert {r[0] for r in rows} == launched
        assert sum(r[1] == "MAP" for r in rows) == maps
        assert sum(r[1] == "REDUCE" for r in rows) == reduces
        assert {r[2] for r in rows} == {"SUCCEEDED"}
        assert {r[3] for r in rows} == {"hadoopnode"}
        assert all(str(r[4]).startswith(f"container_1756057717712_{job}_01_") for r in rows)
    assert q(con, "SELECT count(*) FROM tasks")[0][0] == 2 + 77 + 2


def test_final_counters_land_per_attempt(con: Any) -> None:
    def counter(attempt: str, name: str) -> int:
        return int(q(con, "SELECT value FROM counters WHERE scope = 'attempt' AND attempt_id = ? "
                          "AND group_name = ? AND counter_name = ?", attempt, TASK, name)[0][0])

    assert counter("attempt_1756057717712_0001_m_000000_0", "MAP_INPUT_RECORDS") == 50_000_000
    reduce = "attempt_1756057717712_0002_r_000000_0"
    assert counter(reduce, "REDUCE_SHUFFLE_BYTES") == 10_400_000_456
    assert counter(reduce, "SHUFFLED_MAPS") == 76
    assert counter(reduce, "REDUCE_OUTPUT_RECORDS") == 100_000_000
    # 77 TeraSort attempts each printed their counters: 28 per map, 35 for the reduce (Counters: N)
    per_attempt = q(con, "SELECT attempt_id, count(*) FROM counters WHERE scope = 'attempt' AND job_id = ? "
                         "GROUP BY 1", "job_1756057717712_0002")
    assert len(per_attempt) == 77
    assert {n for a, n in per_attempt if "_m_" in a} == {28}
    assert {n for a, n in per_attempt if "_r_" in a} == {35}


def test_terasort_maps_spill_and_merge_as_the_log_says(con: Any, fixtures_dir: Path) -> None:
    raw = _raw(fixtures_dir, TERASORT)
    finished = q(con, "SELECT count(*) FROM attempt_events WHERE kind = 'spill_finish' AND job_id = ?",
                 "job_1756057717712_0002")
    assert finished[0][0] == raw.count("MapTask: Finished spill ")
    rows = q(con, """
        SELECT e.attempt_id,
               count(*) FILTER (WHERE kind = 'spill_finish'),
               count(*) FILTER (WHERE kind = 'spill_finish' AND thread_name = 'SpillThread'),
               sum(bytes) FILTER (WHERE kind = 'spill_bytes'),
               sum(records) FILTER (WHERE kind = 'spill_records'),
               max(segments) FILTER (WHERE kind = 'merge_pass')
        FROM attempt_events e WHERE e.job_id = 'job_1756057717712_0002' AND e.attempt_id LIKE '%\\_m\\_%' ESCAPE '\\'
        GROUP BY 1""")
    counters = dict(q(con, "SELECT attempt_id || '/' || counter_name, value FROM counters WHERE scope = 'attempt' "
                           "AND counter_name IN ('MAP_OUTPUT_BYTES', 'MAP_OUTPUT_RECORDS')"))
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
    (detail,) = q(con, "SELECT detail FROM attempt_events WHERE attempt_id = ? AND kind = 'final_merge'", reduce)
    assert detail[0] == "on_disk=15"
    fetched = q(con, "SELECT sum(CAST(regexp_extract(detail, 'len=(\\d+)', 1) AS BIGINT)) FROM attempt_events "
                     "WHERE attempt_id = ? AND kind = 'fetch_start' AND detail LIKE '%target=MEMORY%'", reduce)
    assert fetched[0][0] == 10_400_000_456  # = REDUCE_SHUFFLE_BYTES: every map output went to memory
    phases = q(con, "SELECT phase, lane, dur_ms, data_bytes FROM attempt_phases WHERE attempt_id = ? "
                    "ORDER BY lane DESC, start_ms", reduce)
    assert [p[0] for p in phases if p[1] == "main"] == [
        "setup", "wait", "shuffle", "sort", "reduce+write", "commit", "other"]
    by_name = {(p[0], p[1]): p for p in phases}
    assert by_name[("shuffle", "main")][3] == 10_400_000_456
    assert by_name[("sort", "main")][3] == 10_400_000_090  # 'Merging 15 files, 10400000090 bytes from disk'
    assert by_name[("reduce+write", "main")][3] == 10_000_000_000
    background = by_name[("merge", "background")]
    assert 0 < background[2] <= by_name[("shuffle", "main")][2]  # the in-memory merges ran while shuffling
    # Hadoop's sort begins when Shuffle.run stops the event fetcher (18:00:04,655), not at finalMerge
    # (18:00:06,261): the 1.6 s between is MergeManager.close waiting for the last in-memory merge
    ((final_ms,),) = q(con, "SELECT ts_ms FROM attempt_events WHERE attempt_id = ? AND kind = 'final_merge'", reduce)
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
    fetches = q(con, "SELECT bytes, detail FROM attempt_events WHERE attempt_id = ? AND kind = 'fetch_start'", reduce)
    assert len(fetches) == 1
    assert "target=MEMORY" in fetches[0][1]
    (final,) = q(con, "SELECT segments, detail FROM attempt_events WHERE attempt_id = ? AND kind = 'final_merge'",
                 reduce)
    assert final == (1, "on_disk=0")  # 'finalMerge called with 1 in-memory map-outputs and 0 on-disk'


def test_phases_of_every_attempt_are_non_negative_and_cover_its_span(con: Any) -> None:
    bad = q(con, "SELECT attempt_id, phase FROM attempt_phases WHERE dur_ms < 0 OR end_ms < start_ms")
    assert bad == []
    gaps = q(con, """
        WITH main AS (SELECT * FROM attempt_phases WHERE lane = 'main'),
        ordered AS (SELECT attempt_id, start_ms, end_ms,
                           lag(end_ms) OVER (PARTITION BY attempt_id ORDER BY start_ms, end_ms) AS prev_end
                    FROM main)
        SELECT a.attempt_id, sum(m.dur_ms) AS covered, a.finish_ms - a.start_ms AS span,
               min(m.start_ms) - a.start_ms AS head, a.finish_ms - max(m.end_ms) AS tail,
               (SELECT count(*) FROM ordered o WHERE o.attempt_id = a.attempt_id AND o.prev_end > o.start_ms) AS n_overlaps
        FROM attempts a JOIN main m USING (attempt_id)
        GROUP BY a.attempt_id, a.start_ms, a.finish_ms
        HAVING abs(covered - span) > ? OR head <> 0 OR tail <> 0 OR n_overlaps > 0""", COVERAGE_TOLERANCE_MS)
    assert gaps == []
    assert q(con, "SELECT count(DISTINCT attempt_id) FROM attempt_phases")[0][0] == 2 + 77 + 2


def test_non_log_files_and_the_application_master_land_as_events(con: Any, fixtures_dir: Path) -> None:
    types = dict(q(con, "SELECT json_extract_string(payload_json, '$.log_type'), count(*) FROM events "
                        "WHERE event_type = 'container_log' GROUP BY 1"))
    raw = "".join(_raw(fixtures_dir, name) for name in (TERAGEN, TERASORT, TERAVALIDATE))
    for log_type in ("stderr", "stdout", "prelaunch.err", "launch_container.sh", "directory.info"):
        assert types[log_type] == raw.count(f"\nLogType:{log_type}\n")
    assert "syslog" not in types  # syslogs are parsed, not kept as text
    am_lines = q(con, "SELECT count(*) FROM events WHERE event_type = 'am_log'")[0][0]
    assert am_lines > 1000


def test_sniffing_and_host_names(fixtures_dir: Path) -> None:
    with gzip.open(fixtures_dir / FOLDER / TERAGEN, "rb") as fh:
        head = fh.read(8192)
    assert sniff_yarn_logs(head, Path("x"))
    assert not sniff_yarn_logs(b"2025-08-24 17:58:22,408 INFO [main] x.Y: z\n", Path("x"))
    assert node_manager_host("hadoopnode_34573") == "hadoopnode"
    assert node_manager_host("node-1.example.org") == "node-1.example.org"


HADOOP2_STYLE = """\
Container: container_1456_0007_01_000002 on node7_45454
=====================================================
LogType:stderr
Log Upload Time:Mon Jan 04 10:00:00 +0000 2016
LogLength:0
Log Contents:

LogType:syslog
Log Upload Time:Mon Jan 04 10:00:00 +0000 2016
LogLength:{length}
Log Contents:
{syslog}
LogType:stdout
Log Upload Time:Mon Jan 04 10:00:00 +0000 2016
LogLength:0
Log Contents:

"""
SYSLOG = (
    "2016-01-04 10:00:01,000 INFO [main] org.apache.hadoop.mapred.MapTask: Processing split: hdfs://nn/in:0+100\n"
    "2016-01-04 10:00:02,000 INFO [main] org.apache.hadoop.mapred.Task: "
    "Task:attempt_1456_0007_m_000000_0 is done. And is in the process of committing\n"
    "2016-01-04 10:00:02,010 INFO [main] org.apache.hadoop.mapred.Task: Task 'attempt_1456_0007_m_000000_0' done."
)


def test_hadoop2_output_without_end_lines_is_framed_by_log_length(tmp_path: Path) -> None:
    path = tmp_path / "app.txt"
    path.write_text(HADOOP2_STYLE.format(length=len(SYSLOG) + 1, syslog=SYSLOG))
    rows = list(read_yarn_logs(path, ReadContext(path)))
    (attempt,) = [r.values for r in rows if r.table == "attempts"]
    assert attempt["attempt_id"] == "attempt_1456_0007_m_000000_0"
    assert attempt["host"] == "node7"
    assert attempt["finish_ms"] - attempt["start_ms"] == 1010
    logs = [r.values for r in rows if r.table == "events"]
    assert sorted('"log_type":"std' in str(v["payload_json"]) for v in logs) == [True, True]


def test_contents_before_any_header_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "app.txt"
    path.write_text("Container: container_1456_0007_01_000002 on node7_45454\nLogContents:\nhello\n")
    with pytest.raises(TraceParseError, match="before any") as err:
        list(read_yarn_logs(path, ReadContext(path)))
    assert err.value.line == 2


FAILED_ATTEMPT = """\
Container: container_1456_0007_01_000003 on node7_45454
LogAggregationType: AGGREGATED
====================================================================
LogType:launch_container.sh
LogLength:{launch_length}
LogContents:
{launch}
End of LogType:launch_container.sh
****************************************************************

Container: container_1456_0007_01_000003 on node7_45454
LogAggregationType: AGGREGATED
====================================================================
LogType:syslog
LogLength:{syslog_length}
LogContents:
{syslog}
End of LogType:syslog
****************************************************************
"""
LAUNCH = ('exec /bin/bash -c "$JAVA_HOME/bin/java -Xmx820m org.apache.hadoop.mapred.YarnChild 10.0.3.4 38703 '
          'attempt_1456_0007_m_000001_0 3 1>stdout 2>stderr "')
FAILING_SYSLOG = (
    "2016-01-04 10:00:01,000 INFO [main] org.apache.hadoop.mapred.MapTask: Processing split: hdfs://nn/in:0+100\n"
    "2016-01-04 10:00:01,050 INFO [main] org.apache.hadoop.mapred.MapTask: mapreduce.task.io.sort.mb: 100\n"
    "2016-01-04 10:00:04,000 WARN [main] org.apache.hadoop.mapred.YarnChild: Exception running child : "
    "java.io.IOException: No space left on device\n"
    "\tat org.apache.hadoop.mapred.MapTask$MapOutputBuffer.sortAndSpill(MapTask.java:1605)\n"
    "2016-01-04 10:00:04,010 INFO [main] org.apache.hadoop.mapred.Task: Runnning cleanup for the task"
)


def test_a_failed_attempt_lands_with_its_error_and_whole_span(tmp_path: Path) -> None:
    path = tmp_path / "app.txt"
    path.write_text(FAILED_ATTEMPT.format(launch_length=len(LAUNCH) + 1, launch=LAUNCH,
                                          syslog_length=len(FAILING_SYSLOG) + 1, syslog=FAILING_SYSLOG))
    rows = list(read_yarn_logs(path, ReadContext(path)))
    (attempt,) = [r.values for r in rows if r.table == "attempts"]
    assert attempt["attempt_id"] == "attempt_1456_0007_m_000001_0"  # from the launch script: no line names it
    assert attempt["status"] == "FAILED"
    assert str(attempt["error"]).startswith("java.io.IOException: No space left on device")
    (task,) = [r.values for r in rows if r.table == "tasks"]
    assert (task["status"], task["successful_attempt_id"]) == ("FAILED", None)
    phases = [(r.values["phase"], r.values["dur_ms"]) for r in rows if r.table == "attempt_phases"]
    assert phases == [("setup", 0), ("read+map+collect", 3010)]


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
    map_merge = ok[(ok["task_type"] == "MAP") & (ok["phase"] == "merge")].groupby("attempt_id")["dur_ms"].sum()
    assert len(map_merge) == 76
    assert not ok[(ok["task_type"] == "REDUCE") & (ok["phase"] == "merge")].empty
    phases = extract_profile(con, job).phases
    assert phases["merge"].count == 76
    assert phases["merge"].avg_ms == pytest.approx(map_merge.mean())
    assert phases["shuffle"].count == 1  # reduce side: the one reduce
    assert phases["spill"].count == 76


def _terasort_lines(fixtures_dir: Path) -> list[str]:
    return _raw(fixtures_dir, TERASORT).split("\n")


def _rows_and_ctx(path: Path) -> tuple[list[Row], ReadContext]:
    ctx = ReadContext(path)
    return list(read_yarn_logs(path, ctx)), ctx


def test_a_container_of_another_application_is_skipped_and_named(fixtures_dir: Path, tmp_path: Path) -> None:
    # One digit of one container header flipped (_0002_ -> _0003_) in TeraSort's real output: that
    # container's files are skipped and named; every other container's rows land as before.
    lines = _terasort_lines(fixtures_dir)
    headers = [i for i, ln in enumerate(lines) if ln.startswith("Container: ")]
    at = headers[len(headers) // 2]
    victim = lines[at].split()[1]
    lines[at] = lines[at].replace("_0002_", "_0003_", 1)
    path = tmp_path / "app.txt"
    path.write_text("\n".join(lines))
    rows, ctx = _rows_and_ctx(path)
    (error,) = ctx.skipped
    assert error.line == at + 1
    assert "is of another application" in error.message
    pristine, _ = _rows_and_ctx(fixtures_dir / FOLDER / TERASORT)
    kept = {r.values.get("container_id") for r in rows if r.table == "attempts"}
    assert victim not in kept
    assert len(kept) == len({r.values.get("container_id") for r in pristine if r.table == "attempts"}) - 1
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert f"1 unreadable record skipped (line {at + 1})" in (result.error or "")


def test_a_damaged_logcontents_line_is_named_and_its_file_still_read(fixtures_dir: Path, tmp_path: Path) -> None:
    lines = _terasort_lines(fixtures_dir)
    at = next(i for i in range(len(lines) // 2, len(lines))
              if lines[i] == "LogContents:" and lines[i - 3] == "LogType:syslog")  # fmt: skip
    lines[at] = "LogCont?nts:"
    path = tmp_path / "app.txt"
    path.write_text("\n".join(lines))
    rows, ctx = _rows_and_ctx(path)
    (error,) = ctx.skipped
    assert (error.line, error.message.split(" 'Log")[0]) == (at + 1, "a damaged")
    pristine, _ = _rows_and_ctx(fixtures_dir / FOLDER / TERASORT)
    assert [r for r in rows if r.table != "events"] == [r for r in pristine if r.table != "events"]


def test_plain_output_cut_short_lands_as_partial(fixtures_dir: Path, tmp_path: Path) -> None:
    lines = _terasort_lines(fixtures_dir)
    path = tmp_path / "app.txt"
    path.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    rows, ctx = _rows_and_ctx(path)
    assert ctx.cut is not None
    assert "ends after" in ctx.cut.message
    assert [r for r in rows if r.table == "attempts"]
    assert ingest_paths([path], Store(tmp_path / "store")).results[0].status == "partial"


def test_numbers_no_column_holds_leave_their_field_unknown(fixtures_dir: Path, tmp_path: Path) -> None:
    # A split count past 64 bits failed the jobs table's write; a LogLength of 5,000 digits raised a
    # ValueError out of the reader.  Both lost the file; now the value is unknown and the rest lands.
    text = _raw(fixtures_dir, TERASORT)
    damaged = re.sub(r"Number of splits = \d+", "Number of splits = " + "9" * 25, text, count=1)
    damaged = re.sub(r"LogLength:\d+", "LogLength:" + "8" * 5000, damaged, count=1)
    assert damaged.count("9" * 25) == 1
    assert damaged.count("8" * 5000) == 1
    path = tmp_path / "app.txt"
    path.write_text(damaged)
    rows, _ = _rows_and_ctx(path)
    (job,) = [r.values for r in rows if r.table == "jobs"]
    assert job["total_maps"] is None
    assert ingest_paths([path], Store(tmp_path / "store")).results[0].status == "landed"


# TeraValidate's containers: the AM, its one map and its one reduce (their launch scripts say which)
AM, MAP = "container_1756057717712_0003_01_000001", "container_1756057717712_0003_01_000002"
_FRAME = re.compile(rb"Container: (\S+) on (\S+)\nLogAggregationType: \w+\n=+\nLogType:(.*)\n"
                    rb"LogLastModifiedTime:.*\nLogLength:(\d+)\nLogContents:\n")


def _teravalidate(fixtures_dir: Path, layout: str) -> str:
    """TeraValidate's real output, as written (3.x: a header per file) or in Hadoop 2.x's layout.

    2.x writes each container's header once, above its files, and no end lines: the
    files are rebuilt from the real ones, byte for byte.
    """
    with gzip.open(fixtures_dir / FOLDER / TERAVALIDATE, "rb") as fh:
        raw = fh.read()
    if layout == "3.x":
        return raw.decode()
    out, last = [], b""
    for frame in _FRAME.finditer(raw):
        container, host, log_type, length = frame.groups()
        if container != last:
            out.append(b"\nContainer: %s on %s\n%s\n" % (container, host, b"=" * 40))
            last = container
        body = raw[frame.end():frame.end() + int(length)]
        out.append(b"LogType:%s\nLog Upload Time:Sun Aug 24 18:02:00 +0000 2025\nLogLength:%s\nLog Contents:\n%s\n"
                   % (log_type, length, body))
    assert len(out) == raw.count(b"\nEnd of LogType:") + 3
    return b"".join(out).decode().lstrip("\n")


def _read_text(tmp_path: Path, text: str) -> tuple[list[Row], ReadContext]:
    path = tmp_path / "app.txt"
    path.write_text(text)
    return _rows_and_ctx(path)


def _container_logs(rows: list[Row]) -> set[tuple[str, str, int]]:
    logs = [json.loads(str(r.values["payload_json"])) for r in rows
            if r.table == "events" and r.values["event_type"] == "container_log"]
    return {(log["container_id"], log["log_type"], log["chars"]) for log in logs}


def _tables(rows: list[Row], *tables: str) -> list[Row]:
    return [r for r in rows if r.table in tables]


@pytest.mark.parametrize("layout", ["3.x", "2.x"])
def test_a_file_whose_logtype_line_is_damaged_is_named_not_read_as_the_file_before(
        fixtures_dir: Path, tmp_path: Path, layout: str) -> None:
    # The map's 'LogType:syslog' line damaged: its syslog had been read as the file before it
    # (its stdout, 0 bytes), so the map attempt vanished without a word
    text = _teravalidate(fixtures_dir, layout)
    pristine, _ = _read_text(tmp_path, text)
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line == "LogType:syslog")
    lines[at] = "LogTyp:syslog"
    rows, ctx = _read_text(tmp_path, "\n".join(lines))
    contents = next(i for i in range(at, len(lines)) if lines[i] in ("LogContents:", "Log Contents:")) + 1
    (error,) = ctx.skipped
    assert error.line == contents
    assert f"(lines {contents}-" in error.message
    assert "readable 'LogType:' line" in error.message
    assert _container_logs(rows) == _container_logs(pristine)  # the map's stdout is its own empty one
    assert ({r.values["attempt_id"] for r in _tables(rows, "attempts")}
            == {r.values["attempt_id"] for r in _tables(pristine, "attempts")} - {"attempt_1756057717712_0003_m_000000_0"})
    reduce = [r for r in pristine if r.values.get("task_id") == "task_1756057717712_0003_r_000000"]
    assert [r for r in rows if r.values.get("task_id") == "task_1756057717712_0003_r_000000"] == reduce
    assert _tables(rows, "jobs") == _tables(pristine, "jobs")


def test_a_container_whose_only_header_is_damaged_is_named_not_merged_into_the_one_before(
        fixtures_dir: Path, tmp_path: Path) -> None:
    # Hadoop 2.x heads each container once: with the AM's header damaged, its files had joined
    # the map's container, which was then read as the AM (the map attempt gone, nothing named)
    text = _teravalidate(fixtures_dir, "2.x")
    pristine, _ = _read_text(tmp_path, text)
    damaged = text.replace(f"Container: {AM} on", f"Containr: {AM} on")
    assert damaged.count("Containr:") == 1
    rows, ctx = _read_text(tmp_path, damaged)
    lines = damaged.split("\n")
    header = lines.index(f"Containr: {AM} on hadoopnode_34573")
    next_header = next(i for i in range(header, len(lines)) if lines[i].startswith("Container: "))
    am_files = [i + 1 for i in range(header, next_header) if lines[i] == "Log Contents:"]
    assert len(am_files) == 7
    assert [e.line for e in ctx.skipped] == am_files
    assert all("readable 'Container:' line" in e.message for e in ctx.skipped)
    for table in ("attempts", "tasks", "counters", "attempt_events", "attempt_phases"):
        assert _tables(rows, table) == _tables(pristine, table), table
    assert _container_logs(rows) == {log for log in _container_logs(pristine) if log[0] != AM}
    assert not [r for r in rows if r.table == "events" and r.values["event_type"] == "am_log"]


@pytest.mark.parametrize("damage", ["header", "header and rule"])
def test_a_file_whose_own_header_is_damaged_is_named_not_given_to_the_container_before(
        fixtures_dir: Path, tmp_path: Path, damage: str) -> None:
    # 2.9+/3.x head each file: the AM's first file (directory.info) had been given to the map
    text = _teravalidate(fixtures_dir, "3.x")
    pristine, _ = _read_text(tmp_path, text)
    lines = text.split("\n")
    at = lines.index(f"Container: {AM} on hadoopnode_34573")
    assert lines[at + 3] == "LogType:directory.info"
    lines[at] = lines[at].replace("Container:", "Containr:")
    if damage == "header and rule":
        lines[at + 2] = "=" * 5
    rows, ctx = _read_text(tmp_path, "\n".join(lines))
    (error,) = ctx.skipped
    assert error.line == at + 7  # its 'LogContents:' line
    assert "readable 'Container:' line" in error.message
    assert _container_logs(rows) == _container_logs(pristine) - {
        log for log in _container_logs(pristine) if log[:2] == (AM, "directory.info")}
    assert _tables(rows, "attempts", "counters", "jobs") == _tables(pristine, "attempts", "counters", "jobs")


def test_a_damaged_first_file_is_named_and_every_file_after_it_read(fixtures_dir: Path, tmp_path: Path) -> None:
    # The first file's 'LogType:' line damaged had raised 'log contents before any header': nothing landed
    text = _teravalidate(fixtures_dir, "3.x")
    pristine, _ = _read_text(tmp_path, text)
    rows, ctx = _read_text(tmp_path, text.replace("LogType:directory.info", "LogType directory.info", 1))
    (error,) = ctx.skipped
    assert error.line == 7
    assert _container_logs(rows) == _container_logs(pristine) - {(MAP, "directory.info", 1936)}
    assert _tables(rows, "attempts", "counters", "jobs") == _tables(pristine, "attempts", "counters", "jobs")


@pytest.mark.parametrize("layout", ["3.x", "2.x"])
def test_output_written_twice_is_read_once_and_noted(fixtures_dir: Path, tmp_path: Path, layout: str) -> None:
    # `cat out.txt out.txt`: every attempt had landed twice (126 counter rows for 63, bytes read doubled)
    text = _teravalidate(fixtures_dir, layout)
    once, _ = _read_text(tmp_path, text)
    rows, ctx = _read_text(tmp_path, text + text)
    assert rows == once
    assert ctx.skipped == []
    containers = sorted({r.values["container_id"] for r in _tables(once, "attempts")} | {AM})
    assert len(ctx.notes) == 3
    for container, note in zip(containers, sorted(ctx.notes), strict=True):
        assert note.startswith(f"{container}'s directory.info, launch_container.sh, ")
        assert "read once" in note
    result = ingest_paths([tmp_path / "app.txt"], Store(tmp_path / "store")).results[0]
    assert result.status == "landed"


def test_a_log_uploaded_in_parts_is_read_whole(fixtures_dir: Path, tmp_path: Path) -> None:
    # Rolling log aggregation uploads a container's syslog in parts, each a file of the same name:
    # a part is no copy (its text differs), and every part is read, as one syslog
    text = _teravalidate(fixtures_dir, "3.x")
    once, _ = _read_text(tmp_path, text)
    head = f"Container: {MAP} on "
    start = text.index("LogType:syslog\n", text.index(head))
    frame_top = text.rindex(head, 0, start)
    contents = text.index("LogContents:\n", start) + len("LogContents:\n")
    end = text.index("End of LogType:syslog\n", contents)
    lines = text[contents:end].splitlines(keepends=True)
    half = len(lines) // 2
    frame = text[frame_top:start]

    def part(body: list[str]) -> str:
        size = len("".join(body).encode())
        return f"{frame}LogType:syslog\nLogLastModifiedTime:Sun Aug 24 18:01:20 +0000 2025\nLogLength:{size}\n" \
               f"LogContents:\n{''.join(body)}End of LogType:syslog\n"

    rows, ctx = _read_text(tmp_path, text[:frame_top] + part(lines[:half]) + part(lines[half:])
                           + text[end + len("End of LogType:syslog\n"):])  # fmt: skip
    assert ctx.skipped == []
    assert ctx.notes == []
    assert _tables(rows, "attempts", "counters", "jobs") == _tables(once, "attempts", "counters", "jobs")
    def timed(of: list[Row]) -> list[dict[str, object]]:  # (the second part's lines moved down by its header)
        return [{k: v for k, v in r.values.items() if k != "line_no"}
                for r in _tables(of, "attempt_phases", "attempt_events")]  # fmt: skip

    assert timed(rows)
    assert timed(rows) == timed(once)


@pytest.mark.parametrize(("hours", "minutes"), [(-7, 0), (5, 30)])
def test_logs_in_local_time_are_moved_to_utc(fixtures_dir: Path, tmp_path: Path, hours: int, minutes: int) -> None:
    # log4j writes local time without a zone; the done name's times are epoch.  The output of a
    # cluster logging in UTC-7 had put every attempt 7 h before the job it ran in.
    text = _teravalidate(fixtures_dir, "3.x")
    once, _ = _read_text(tmp_path, text)
    shift = dt.timedelta(hours=hours, minutes=minutes if hours >= 0 else -minutes)

    def local(m: re.Match[str]) -> str:
        t = dt.datetime.strptime(m.group(0), "%Y-%m-%d %H:%M:%S,%f") + shift
        return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"

    rows, ctx = _read_text(tmp_path, re.sub(r"(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}", local, text))
    assert rows == once
    sign = "-" if hours < 0 else "+"
    assert any(f"UTC{sign}{abs(hours):02d}:{minutes:02d}" in n for n in ctx.notes)
