"""One account per job: a job that several ingested files describe is counted once.

Users feed whole directories, and the same run often lies there twice: a
`done_intermediate` copy cut short beside the complete `.jhist`, or a 0.20
history log beside Rumen's parse of it.  The store's views keep one source per
unit (job, task, attempt, counter set) and ``raw.*`` keeps everything; ``verify``
names the overlap.
"""

from __future__ import annotations

from pathlib import Path

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from phaseline.verify import verify_store
from profiles import queries as q
from tests.profiles.profiles_doubles import JHIST

JOB = "job_1329348432655_0001"


def _truncated_copy(src: Path, dest: Path, keep_lines: int) -> Path:
    lines = src.read_bytes().splitlines(keepends=True)
    dest.write_bytes(b"".join(lines[:keep_lines]))
    return dest


def test_a_cut_copy_beside_the_complete_jhist_counts_once(
    fixtures_dir: Path, tmp_path: Path, store_dir: Path
) -> None:
    complete = fixtures_dir / JHIST
    alone = Store(tmp_path / "alone")
    ingest_paths([complete], alone)
    expected = alone.connect()

    cut = _truncated_copy(complete, tmp_path / "done_intermediate.jhist", keep_lines=30)
    store = Store(store_dir)
    summary = ingest_paths([cut, complete], store)
    assert {r.status for r in summary.results} <= {"landed", "partial"}
    con = store.connect()
    # raw keeps both accounts; the views hold the complete one only
    (raw_sources,), = con.execute("SELECT count(DISTINCT source_sha256) FROM raw.attempts").fetchall()
    assert raw_sources == 2
    for table in ("jobs", "tasks", "attempts", "counters"):
        got = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        assert got == expected.execute(f"SELECT count(*) FROM {table}").fetchone(), table
    # so every profile query sees what the complete file alone gives
    for concept in (q.timeline, q.phases, q.waves):
        assert len(concept(con, JOB)) == len(concept(expected, JOB)), concept.__name__
    assert q.job_summary(con, JOB).to_dict("records") == q.job_summary(expected, JOB).to_dict("records")

    report = verify_store(store)
    assert report.ok, report.findings
    (finding,) = [f for f in report.findings if f.check == "overlaps"]
    assert (finding.severity, finding.subject) == ("warning", JOB)
    assert f"take its rows from {complete.resolve()}" in finding.detail  # sources are keyed by real path
    assert str(cut.resolve()) in finding.detail


def test_first_hand_history_wins_over_rumens_parse(fixtures_dir: Path, store_dir: Path) -> None:
    folder = fixtures_dir / "apache-hadoop-mapreduce" / "rumen-small-trace-test"
    log, parse = folder / "sample-job-tracker-logs.gz", folder / "job-tracker-logs-trace-output.gz"
    store = Store(store_dir)
    ingest_paths([parse, log], store)
    con = store.connect()
    rows = con.execute(
        "SELECT job_id, count(*), min(source_format), max(source_format) FROM jobs GROUP BY job_id ORDER BY job_id"
    ).fetchall()
    assert [(n, lo, hi) for _, n, lo, hi in rows] == [(1, "history_v1", "history_v1")] * 4
    (attempts, sources), = con.execute(
        "SELECT count(*), count(DISTINCT source_sha256) FROM attempts WHERE job_id = 'job_200904211745_0004'"
    ).fetchall()
    assert (attempts, sources) == (252, 1)
    assert con.execute("SELECT count(*) FROM raw.jobs").fetchone() == (8,)


def test_a_derived_trace_adds_nothing_to_a_first_hand_account(fixtures_dir: Path, store_dir: Path) -> None:
    # rumen-zombie's input trace is another Rumen parse of the same 0.20 jobs; it has a killed attempt
    # (m_000113_3) that the log has not: unit by unit, the view had taken it in (253 attempts, 2 sources)
    mapreduce = fixtures_dir / "apache-hadoop-mapreduce"
    folder = mapreduce / "rumen-small-trace-test"
    store = Store(store_dir)
    ingest_paths([folder / "sample-job-tracker-logs.gz", folder / "job-tracker-logs-trace-output.gz",
                  mapreduce / "rumen-zombie" / "input-trace.json"], store)  # fmt: skip
    con = store.connect()
    job = "job_200904211745_0004"
    assert con.execute(f"SELECT count(*) FROM raw.attempts WHERE attempt_id = 'attempt_{job[4:]}_m_000113_3'").fetchone()[0] == 1
    for table in ("attempts", "tasks", "counters"):
        (sources,) = con.execute(f"SELECT count(DISTINCT source_sha256) FROM {table} WHERE job_id = '{job}'").fetchone()
        assert sources == 1, table
    assert con.execute(f"SELECT count(*) FROM attempts WHERE job_id = '{job}'").fetchone() == (252,)
    # where Rumen is the only account of a job (the zombie trace's own jobs), it stands in whole
    (only_rumen,) = con.execute(
        "SELECT count(*) FROM jobs WHERE source_format = 'rumen' AND job_id NOT IN "
        "(SELECT job_id FROM raw.jobs WHERE source_format = 'history_v1')"
    ).fetchone()
    assert only_rumen == con.execute(
        "SELECT count(DISTINCT job_id) FROM raw.jobs WHERE job_id NOT IN "
        "(SELECT job_id FROM raw.jobs WHERE source_format = 'history_v1')"
    ).fetchone()[0]


def test_derived_formats_name_real_readers() -> None:
    from ingest.formats import formats
    from phaseline.schemas import DERIVED_FORMATS, HISTORY_FORMATS

    assert DERIVED_FORMATS.issubset(f.name for f in formats())
    assert HISTORY_FORMATS.issubset(f.name for f in formats())


#: A YARN run's .jhist and aggregated task logs (tests/data/yarn/README.md), which describe the same
#: job, tasks, attempts and counters; its 12 maps' logs hold more rows about the job than its history
#: (where the store's files hold rows of several sources, every table's rows count).
YARN_RUN = Path(__file__).resolve().parents[1] / "data" / "yarn" / "cpumap-24mb-r1-0"


def test_a_jobs_history_times_its_attempts_and_its_task_logs_give_their_phases(store_dir: Path) -> None:
    """The task logs hold more rows about the job than its .jhist, but an attempt's launch is the
    ApplicationMaster's to say: the logs' first line comes only once the task's JVM runs."""
    import gzip
    import json

    (jhist,) = YARN_RUN.glob("*.jhist.gz")
    started = {}
    for line in gzip.decompress(jhist.read_bytes()).decode().splitlines()[2:]:
        if not line.strip():
            continue
        event = json.loads(line)
        if event["type"] in ("MAP_ATTEMPT_STARTED", "REDUCE_ATTEMPT_STARTED"):
            body = next(iter(event["event"].values()))
            started[body["attemptId"]] = body["startTime"]
    store = Store(store_dir)
    ingest_paths([YARN_RUN, YARN_RUN.with_name("join-8mb-r2-0")], store)  # a folder of runs, as users feed it
    con = store.connect()
    job = "job_1795902326022_0016"
    got = dict(con.execute("SELECT attempt_id, start_ms FROM attempts WHERE job_id = ?", [job]).fetchall())
    assert got == started
    # the logs' first lines come seconds later: they would have cut the JVM's start from every attempt
    logs_start = dict(con.execute(
        "SELECT attempt_id, start_ms FROM raw.attempts AS a JOIN raw.sources AS s ON s.sha256 = a.source_sha256 "
        "WHERE format = 'yarn-aggregated-logs' AND a.job_id = ?", [job]
    ).fetchall())  # fmt: skip
    assert all(logs_start[a] > started[a] for a in started)
    # what only the logs have stays: every attempt's phases
    (phased,) = con.execute("SELECT count(DISTINCT attempt_id) FROM attempt_phases WHERE job_id = ?", [job]).fetchone()
    assert phased == len(started)


HAND_EDITED = Path(
    "apache-hadoop/derived-hand-edited/"
    "job_1329348432655_0001-1329348443227-user-Sleep+job-1329348468601-10-1-SUCCEEDED-default.jhist"
)


def test_verify_names_more_successful_tasks_than_the_job_has(fixtures_dir: Path, store_dir: Path) -> None:
    # upstream's hand-edited copy of the Sleep job has a second successful reduce; its job says 1
    ingest_paths([fixtures_dir / HAND_EDITED], Store(store_dir))
    report = verify_store(Store(store_dir))
    assert report.ok
    counts = [f for f in report.findings if f.check == "counts"]
    assert [(f.severity, f.subject) for f in counts] == [("warning", JOB)]
    assert counts[0].detail.startswith("2 successful reduce tasks, but the job says 1 reduces in all and 1 finished")


def test_a_copy_with_more_tasks_than_its_job_adds_none_to_a_sound_one(
    fixtures_dir: Path, tmp_path: Path, store_dir: Path
) -> None:
    # beside the pristine Sleep history, the edited copy (more rows, so it was preferred) gave the views
    # 2 reduces of a 1-reduce job; now the sound account is kept and the edited one only stands in
    pristine = Store(tmp_path / "alone")
    ingest_paths([fixtures_dir / JHIST], pristine)
    expected = pristine.connect()
    store = Store(store_dir)
    ingest_paths([fixtures_dir / HAND_EDITED, fixtures_dir / JHIST], store)
    con = store.connect()
    for table in ("jobs", "tasks", "attempts", "counters"):
        got = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        assert got == expected.execute(f"SELECT count(*) FROM {table}").fetchone(), table
    assert con.execute(
        "SELECT DISTINCT path LIKE '%derived-hand-edited%', stand_in FROM overlapping_sources ORDER BY 1"
    ).fetchall() == [(False, False), (True, True)]
    assert not [f for f in verify_store(store).findings if f.check == "counts"]


def test_a_jhist_copied_under_another_name_lands_once(fixtures_dir: Path, tmp_path: Path, store_dir: Path) -> None:
    # A .jhist names its job in its events, so a byte-identical copy under a name without the job
    # id is the same source.  It had landed a second time: every row twice, `verify` content, and
    # the job's profile failing on its repeated attempt ids.
    complete = fixtures_dir / JHIST
    copy = tmp_path / "teragen.jhist"
    copy.write_bytes(complete.read_bytes())
    store = Store(store_dir)
    summary = ingest_paths([complete, copy], store)
    assert [r.status for r in summary.results] == ["landed", "skipped"]
    assert "same content as" in (summary.results[1].error or "")
    con = store.connect()
    assert con.execute("SELECT count(*) FROM raw.jobs").fetchone() == (1,)
    alone = Store(tmp_path / "alone")
    ingest_paths([complete], alone)
    for table in ("attempts", "tasks", "counters", "events"):
        (n,) = con.execute(f"SELECT count(*) FROM raw.{table}").fetchone() or (0,)
        assert (n,) == alone.connect().execute(f"SELECT count(*) FROM raw.{table}").fetchone(), table
    # a conf XML is named for its job when its properties are not: the same bytes under another
    # job's name are that job's conf (test_store tests the rule with a toy reader)
    conf = next((fixtures_dir / "apache-hadoop-mapreduce/rumen-small-trace-test/counters-format-test-logs").glob(
        "*_40864_conf.xml"))  # fmt: skip
    other = tmp_path / conf.name.replace("_40864_", "_40865_")
    other.write_bytes(conf.read_bytes())
    assert [r.status for r in ingest_paths([conf, other], store).results] == ["landed", "landed"]


def _rerun(complete: Path, tmp_path: Path) -> Path:
    """The job of ``complete`` run again an hour later, under the same id, map 3 on a second attempt."""
    import re

    later = re.sub(rb"\b13\d{11}\b", lambda m: str(int(m.group()) + 3_600_000).encode(), complete.read_bytes())
    later = later.replace(b"attempt_1329348432655_0001_m_000003_0", b"attempt_1329348432655_0001_m_000003_1")
    assert later.count(b"m_000003_1") >= 2
    other = tmp_path / "rerun" / "job_1329348432655_0001-rerun.jhist"
    other.parent.mkdir()
    other.write_bytes(later)
    return other


def test_another_run_under_the_same_job_id_adds_nothing_and_is_named(
    fixtures_dir: Path, tmp_path: Path, store_dir: Path
) -> None:
    # The same job id, run again an hour later (a replayed trace, LocalJobRunner's random id drawn
    # twice), where map 3 needed a second attempt.  Unit by unit the views had mixed the runs: the
    # kept run's tasks with the other run's attempt m_000003_1 beside its own m_000003_0, silently.
    complete = fixtures_dir / JHIST
    other = _rerun(complete, tmp_path)

    store = Store(store_dir)
    assert {r.status for r in ingest_paths([complete, other], store).results} == {"landed"}
    con = store.connect()
    assert con.execute("SELECT count(*) FROM raw.attempts WHERE attempt_id LIKE '%m_000003%'").fetchone() == (2,)
    (kept, rerun), = con.execute(
        "SELECT any_value(path) FILTER (WHERE NOT other_run), any_value(path) FILTER (WHERE other_run) "
        "FROM overlapping_sources"
    ).fetchall()
    assert {kept, rerun} == {str(complete.resolve()), str(other.resolve())}
    # the views hold one run, whole: what its file alone gives (``events`` keeps every file's records)
    alone = Store(tmp_path / "alone")
    ingest_paths([Path(kept)], alone)
    expected = alone.connect()
    for table in ("jobs", "tasks", "attempts", "counters"):
        query = f"SELECT * EXCLUDE (source_sha256) FROM {table} ORDER BY ALL"
        assert con.execute(query).fetchall() == expected.execute(query).fetchall(), table
    assert con.execute("SELECT count(*) FROM attempts WHERE attempt_id LIKE '%m_000003%'").fetchone() == (1,)

    # verify names the other run, when it was submitted, and that none of it is shown
    (finding,) = [f for f in verify_store(store).findings if f.check in ("overlaps", "runs")]
    assert (finding.severity, finding.check, finding.subject) == ("warning", "runs", JOB)
    assert finding.detail.startswith(f"another run under the same job id: the views take its rows from {kept} (jhist")
    gap = "3600 s after" if rerun == str(other.resolve()) else "3600 s before"
    hidden = sum(
        con.execute(f"SELECT (SELECT count(*) FROM raw.{t}) - (SELECT count(*) FROM {t})").fetchone()[0]
        for t in ("jobs", "tasks", "attempts", "counters", "attempt_events", "attempt_phases")
    )
    assert f"and none of the {hidden} rows of {rerun} (jhist: submitted " in finding.detail
    assert f"{gap} the kept one" in finding.detail


def test_ingest_warns_of_another_run_under_a_job_id(fixtures_dir: Path, tmp_path: Path, store_dir: Path) -> None:
    from click.testing import CliRunner

    from phaseline.cli import main

    complete = fixtures_dir / JHIST
    other = _rerun(complete, tmp_path)
    first = CliRunner().invoke(main, ["ingest", "--store", str(store_dir), str(complete)])
    assert first.exit_code == 0, first.output
    assert "warning:" not in first.output
    second = CliRunner().invoke(main, ["ingest", "--store", str(store_dir), str(other)])
    assert second.exit_code == 0, second.output
    (warning,) = [line for line in second.output.splitlines() if line.startswith("warning:")]
    assert warning.startswith(f"warning: {JOB}: another run under the same job id: the views take its rows from ")
    assert "3600 s" in warning
    # a copy of the same run is no other run: nothing to warn of
    cut = _truncated_copy(complete, tmp_path / "done_intermediate.jhist", keep_lines=30)
    third = CliRunner().invoke(main, ["ingest", "--store", str(tmp_path / "s2"), str(complete), str(cut)])
    assert third.exit_code == 0, third.output
    assert "warning:" not in third.output
