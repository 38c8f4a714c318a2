"""HiTune sample records and report CSVs: ingest, bad input, and the real 640-map run."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from profiles.dataflow.reconstruct import dataflow_query, reconstruct
from profiles.dataflow.spec import shipped_spec
from tests.hitune_samples import JOB, write_samples


def test_malformed_records_are_named_and_the_rest_lands(tmp_path: Path, store_dir: Path) -> None:
    bad = (
        "1100\tstack\th1|attempt_201106081729_0001_m_000000_0|x|main\tRUNNABLE|A.b",  # line 13: thread id
        "1110\tstack\th1|attempt_201106081729_0001_m_000000_0|1|main\tSLEEPY|A.b",  # line 14: state
        "not a record",  # line 15
        "1120\tcpu\th1|all\tuser=3.5;idle=96.5",  # line 16: lands in system_samples
    )
    path = write_samples(tmp_path / "s.tsv", bad)
    store = Store(store_dir)
    summary = ingest_paths([path], store)
    con = store.connect()
    assert con.execute("SELECT count(*) FROM samples").fetchone() == (11,)
    assert con.execute("SELECT count(*) FROM events WHERE event_type = 'malformed'").fetchone() == (3,)
    assert con.execute("SELECT count(*) FROM system_samples").fetchone() == (2,)
    status, events_read = con.execute("SELECT status, events_read FROM sources").fetchall()[0]
    assert status == "landed"
    assert events_read == 11 + 3 + 2
    assert summary.rows_per_table()["samples"] == 11
    # the unmapped-stack sample (LocalJobRunner$Job.run) is kept and counted
    assert reconstruct(con, JOB, shipped_spec("hadoop-0.20")).unmapped == 1


def test_malformed_record_notes_name_file_and_line(tmp_path: Path, store_dir: Path) -> None:
    path = write_samples(tmp_path / "s.tsv", ("1100\tstack\th1|a|x|main\tRUNNABLE|A.b",))
    results = []
    ingest_paths([path], Store(store_dir), on_file=lambda p, r: results.append(r))
    assert any(f"{path}:13:" in n and "thread id" in n for n in results[0].notes)


def _instrument_counts(path: Path) -> dict[tuple[str, str], int]:
    """Per (host, phase): HiTune's phase_count summed over distinct (attempt, phase, thread)."""
    seen: dict[tuple[str, str, str], tuple[str, int]] = {}
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh, quoting=csv.QUOTE_NONE):
            seen[(row["attempt_id"], row["phase_name"], row["thread_id"])] = (row["host"], int(row["phase_count"]))
    out: dict[tuple[str, str], int] = defaultdict(int)
    for (_, phase, _), (host, count) in seen.items():
        out[(host, phase)] += count
    return dict(out)


def test_hitune_csv_run_reproduces_phase_counts_per_host(fixtures_dir: Path, store_dir: Path) -> None:
    folder = fixtures_dir / "intel-hitune" / "visual_report_example"
    store = Store(store_dir)
    ingest_paths([folder / "instruments_map.csv", folder / "instruments_red.csv", folder / "cpu.csv",
                  folder / "ReduceAttempt.csv"], store)
    con = store.connect()
    expected = _instrument_counts(folder / "instruments_map.csv") | _instrument_counts(folder / "instruments_red.csv")
    names = {"Mapphase": "map", "SpillThread": "spill", "Copier": "copier", "MemMerge": "inmem_merge",
             "FSMerge": "ondisk_merge", "Shuffle": "shuffle", "Sort": "sort", "Reduce": "reduce"}
    got = {(h, v): int(n) for h, v, n in con.execute(
        "SELECT host, vertex, sum(samples) FROM vertex_instances GROUP BY ALL").fetchall()}
    assert got == {(h, names[p]): n for (h, p), n in expected.items()}
    assert len(got) == 8 * 8  # 8 hosts x 8 vertices
    # Figure 20 style: the reduce vertex by host; normalized times average to ~1
    rows = dataflow_query(con, "by_host", job_id=JOB, vertex="reduce")
    assert len(rows) == 8
    assert sum(r["instances"] for r in rows) == 32
    assert abs(sum(r["norm_time"] * r["instances"] for r in rows) / 32 - 1.0) < 1e-3
    # Figure 17 style: copier threads are idle a large share of the time in this run
    busy = {r["vertex"]: r for r in dataflow_query(con, "busy_idle", job_id=JOB)}
    assert busy["ondisk_merge"]["idle_pct"] > 99
    assert busy["map"]["busy_pct"] > 99
    assert 30 < busy["copier"]["idle_pct"] < 50
    hot = dataflow_query(con, "hotspots", job_id=JOB, top=1)
    assert {r["vertex"]: r["method"] for r in hot}["copier"] == "MapOutputCopier.copyOutput"
    # HiTune's function counts are inclusive: the share is of the map vertex's samples (62 % of them
    # have MapRunner.run on the stack), not of the summed counts (it said 40 %, shares past 100 % hidden)
    function_rows: dict[tuple[str, str, str], int] = {}  # the file repeats rows: one per (attempt, thread, method)
    with open(folder / "instruments_map.csv", newline="") as fh:
        for row in csv.DictReader(fh, quoting=csv.QUOTE_NONE):
            if row["phase_name"] == "Mapphase" and row["breakdown_type"] == "function":
                key = (row["attempt_id"], row["thread_id"], row["breakdown_name"])
                function_rows[key] = int(row["breakdown_count"])
    function_counts: dict[str, int] = defaultdict(int)
    for (_, _, method), n in function_rows.items():
        function_counts[method] += n
    map_samples = sum(n for (_, phase), n in expected.items() if phase == "Mapphase")
    top_map = {r["method"]: r["pct"] for r in dataflow_query(con, "hotspots", job_id=JOB, top=3) if r["vertex"] == "map"}
    run = "org.apache.hadoop.mapred.MapRunner.run"
    assert abs(top_map[run] - 100 * function_counts[run] / map_samples) < 0.01
    assert 60 < top_map[run] < 65
    assert sum(top_map.values()) > 100
    assert map_samples == 423_689
    # system samples: sar CPU every 5 s on 8 hosts + the master
    assert con.execute("SELECT count(DISTINCT host), min(interval_ms) FROM system_samples").fetchone() == (9, 5000)


def test_hitune_csv_history_files_give_tasks_types_and_counters(fixtures_dir: Path, store_dir: Path) -> None:
    # HiTune files the job's setup and cleanup tasks with the maps (m_000641, m_000640); read as maps
    # they made the report say 642 maps and a map-to-shuffle gap of -400 s (the cleanup's finish)
    folder = fixtures_dir / "intel-hitune" / "visual_report_example"
    store = Store(store_dir)
    names = ("MapAttempt.csv", "ReduceAttempt.csv", "MapTask.csv", "ReduceTask.csv", "job.csv")
    summary = ingest_paths([folder / n for n in names], store)
    assert {r.status for r in summary.results} == {"landed"}
    con = store.connect()
    types = dict(con.execute(f"SELECT attempt_id, task_type FROM attempts WHERE job_id = '{JOB}'").fetchall())
    assert types[f"attempt_{JOB[4:]}_m_000640_0"] == "CLEANUP"
    assert types[f"attempt_{JOB[4:]}_m_000641_0"] == "SETUP"
    assert dict(con.execute("SELECT task_type, count(*) FROM tasks GROUP BY 1").fetchall()) == {
        "MAP": 640, "REDUCE": 32, "SETUP": 1, "CLEANUP": 1,
    }
    # the counter columns, under the store's names: the profile needs the maps' input bytes and records
    with (folder / "MapAttempt.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    want = sum(int(r["Map input records"]) for r in rows if r["Map input records"])
    (got,) = con.execute(
        "SELECT sum(value) FROM counters WHERE scope = 'attempt' AND counter_name = 'MAP_INPUT_RECORDS' "
        "AND group_name = 'org.apache.hadoop.mapreduce.TaskCounter'"
    ).fetchone()
    assert got == want > 0
    from profiles.extract import extract_profile

    profile = extract_profile(con, JOB)
    assert (profile.num_maps, profile.num_reduces) == (640, 32)
    # job.csv's byte counters are the job's totals (they were dropped); the others stay summed
    with (folder / "job.csv").open() as fh:
        (job_row,) = csv.DictReader(fh)
    totals = dict(con.execute("SELECT counter_name, value FROM counters WHERE scope = 'job_total'").fetchall())
    names = ("HDFS_BYTES_READ", "HDFS_BYTES_WRITTEN", "FILE_BYTES_READ", "FILE_BYTES_WRITTEN")
    assert totals == {n: int(job_row[n]) for n in names}
    assert profile.counters.hdfs_bytes_read == int(job_row["HDFS_BYTES_READ"])
    assert profile.counters.local_bytes_written == int(job_row["FILE_BYTES_WRITTEN"])
    assert profile.counters.map_input_records == want


def test_a_malformed_hitune_history_row_leaves_no_partial_rows(
    fixtures_dir: Path, tmp_path: Path, store_dir: Path
) -> None:
    # an attempt row with good counters but a start time that is no number: the row is kept as
    # `malformed` (named), and none of its counters land without it
    folder = fixtures_dir / "intel-hitune" / "visual_report_example"
    lines = (folder / "MapAttempt.csv").read_text().splitlines()
    header = lines[0].split(",")
    fields = lines[1].split(",")
    fields[header.index("START_TIME")] = "soon"
    path = tmp_path / "MapAttempt.csv"
    path.write_text("\n".join([lines[0], ",".join(fields), *lines[2:4]]) + "\n")
    store = Store(store_dir)
    ingest_paths([path], store)
    con = store.connect()
    bad = fields[header.index("id")]
    assert con.execute("SELECT count(*) FROM events WHERE event_type = 'malformed'").fetchone() == (1,)
    assert con.execute(f"SELECT count(*) FROM attempts WHERE attempt_id = '{bad}'").fetchone() == (0,)
    assert con.execute(f"SELECT count(*) FROM counters WHERE attempt_id = '{bad}'").fetchone() == (0,)
    assert con.execute("SELECT count(DISTINCT attempt_id) FROM counters").fetchone() == (2,)  # the good rows'


def test_a_number_past_64_bits_is_one_malformed_record_not_a_lost_file(
    fixtures_dir: Path, tmp_path: Path, store_dir: Path
) -> None:
    # Each real HiTune file with one field of one record made 20 digits long: that record is kept as
    # `malformed` (named) and every other lands.  It had failed the table schema at write, quarantining the file.
    folder = fixtures_dir / "intel-hitune" / "visual_report_example"
    damaged = []
    for name, column in (("instruments_map.csv", "thread_id"), ("MapAttempt.csv", "START_TIME"),
                         ("cpu.csv", "Timestamp")):  # fmt: skip
        lines = (folder / name).read_text().splitlines()
        header = lines[0].split(",")
        fields = lines[1].split(",")
        fields[header.index(column)] = "9" * 20
        path = tmp_path / name
        path.write_text("\n".join([lines[0], ",".join(fields), *lines[2:]]) + "\n")
        damaged.append(path)
    damaged.append(write_samples(tmp_path / "s.tsv", ("1100\tstack\th1|a|99999999999999999999|main\tRUNNABLE|A.b",
                                                      "99999999999999999999\tcpu\th1|all\tuser=3.5")))  # fmt: skip
    store = Store(store_dir)
    summary = ingest_paths(damaged, store)
    assert [r.status for r in summary.results] == ["landed"] * 4
    con = store.connect()
    assert con.execute("SELECT count(*) FROM events WHERE event_type = 'malformed'").fetchone() == (5,)
    pristine = Store(tmp_path / "pristine")
    ingest_paths([folder / "instruments_map.csv"], pristine)
    (n,) = pristine.connect().execute("SELECT count(*) FROM vertex_breakdown").fetchone()
    assert con.execute("SELECT count(*) FROM vertex_breakdown").fetchone() == (n - 1,)
    notes = [n for r in summary.results for n in r.notes]
    assert any("does not fit in 64 bits" in n for n in notes)


def test_hitune_rows_that_raised_out_of_the_reader_are_kept(fixtures_dir: Path, tmp_path: Path) -> None:
    # Found by an exception audit, each on a real HiTune file: a header without the attempt_id column
    # (KeyError), a START_TIME of '²' (str.isdigit took it, int() refused), two state counts summing past
    # 64 bits (the write failed).  Each had lost its file.
    folder = fixtures_dir / "intel-hitune" / "visual_report_example"
    lines = (folder / "instruments_map.csv").read_text().splitlines()
    renamed = tmp_path / "a" / "instruments_map.csv"
    renamed.parent.mkdir()
    renamed.write_text("\n".join([lines[0].replace("attempt_id", "attempt"), *lines[1:4]]) + "\n")
    header = lines[0].split(",")
    first = lines[1].split(",")
    big = []
    for state in ("RUNNABLE", "RUNNABLE"):
        f = list(first)
        f[header.index("breakdown_type")], f[header.index("breakdown_name")] = "state", state
        f[header.index("breakdown_count")] = str(2**62 + len(big))
        big.append(",".join(f))
    summed = tmp_path / "b" / "instruments_map.csv"
    summed.parent.mkdir()
    summed.write_text("\n".join([lines[0], *big]) + "\n")
    task_lines = (folder / "MapTask.csv").read_text().splitlines()
    t_header = task_lines[0].split(",")
    t = task_lines[1].split(",")
    t[t_header.index("START_TIME")] = "\u00b2"
    odd_time = tmp_path / "c" / "MapTask.csv"
    odd_time.parent.mkdir()
    odd_time.write_text("\n".join([task_lines[0], ",".join(t), *task_lines[2:5]]) + "\n")
    store = Store(tmp_path / "s")
    summary = ingest_paths([renamed, summed, odd_time], store)
    assert [r.status for r in summary.results] == ["landed"] * 3
    assert summary.results[0].unknown == {"malformed": 3}
    con = store.connect()
    assert con.execute("SELECT busy_samples FROM vertex_instances").fetchall() == [(2**63 - 1,)]  # clamped
    assert summary.results[2].unknown == {"malformed": 1}  # the row with the odd time, kept as malformed
    assert con.execute("SELECT count(*) FROM tasks").fetchone() == (3,)  # and the other three


def _with_field(folder: Path, name: str, column: str, value: str, keep: int = 4) -> list[str]:
    """A real HiTune file's header and first ``keep`` rows, then its next row with ``column`` set to ``value``."""
    lines = (folder / name).read_text().splitlines()
    header = lines[0].split(",")
    fields = lines[keep + 1].split(",")
    fields[header.index(column)] = value
    return [*lines[: keep + 1], ",".join(fields)]


def test_an_attempt_or_task_id_naming_no_job_is_one_malformed_row(
    fixtures_dir: Path, tmp_path: Path, store_dir: Path
) -> None:
    # Found by an audit: `attempt_bad` and `task_x` gave rows with no job id, which the store's required
    # column refused at write: the whole file was quarantined, with no line named.
    folder = fixtures_dir / "intel-hitune" / "visual_report_example"
    paths = []
    for name, bad in (("MapAttempt.csv", "attempt_bad"), ("MapTask.csv", "task_x")):
        path = tmp_path / name
        path.write_text("\n".join(_with_field(folder, name, "id", bad)) + "\n")
        paths.append(path)
    store = Store(store_dir)
    summary = ingest_paths(paths, store)
    assert [(r.status, r.unknown) for r in summary.results] == [("landed", {"malformed": 1})] * 2
    assert any(f"{paths[0]}:6:" in n and "'attempt_bad' names no job" in n for n in summary.results[0].notes)
    assert any(f"{paths[1]}:6:" in n and "'task_x' names no job" in n for n in summary.results[1].notes)
    con = store.connect()
    assert con.execute("SELECT count(*), count(DISTINCT job_id) FROM attempts").fetchone() == (4, 1)
    assert con.execute("SELECT count(*), count(DISTINCT job_id) FROM tasks").fetchone() == (4, 1)
    assert con.execute("SELECT count(*) FROM events WHERE event_type = 'malformed'").fetchone() == (2,)


def test_a_metric_that_is_no_finite_number_is_one_malformed_row(
    fixtures_dir: Path, tmp_path: Path, store_dir: Path
) -> None:
    # sar never prints nan or inf; float() reads them (and 1e999 as inf), and they landed as CPU percentages
    folder = fixtures_dir / "intel-hitune" / "visual_report_example"
    lines = _with_field(folder, "cpu.csv", "%idle", "nan", keep=1)
    lines += _with_field(folder, "cpu.csv", "%user", "1e999", keep=2)[-1:]
    lines += (folder / "cpu.csv").read_text().splitlines()[4:6]
    path = tmp_path / "cpu.csv"
    path.write_text("\n".join(lines) + "\n")
    store = Store(store_dir)
    (result,) = ingest_paths([path], store).results
    assert (result.status, result.unknown) == ("landed", {"malformed": 2})
    assert any(f"{path}:3:" in n and "'%idle'" in n and "'nan' is not a finite number" in n for n in result.notes)
    assert any(f"{path}:4:" in n and "'1e999' is not a finite number" in n for n in result.notes)
    con = store.connect()
    assert con.execute("SELECT count(DISTINCT ts_ms) FROM system_samples").fetchone() == (3,)  # lines 2, 5, 6
    assert con.execute("SELECT count(*) FROM system_samples WHERE isnan(value) OR isinf(value)").fetchone() == (0,)


def test_a_negative_or_non_finite_duration_or_time_is_a_malformed_record(tmp_path: Path, store_dir: Path) -> None:
    # float() took nan, inf, 1e999 and negatives: samples had waited nan or -5 ms, metrics were nan, a
    # record was from 1969
    attempt = "attempt_201106081729_0001_m_000004_0"
    bad = (
        f"1200\tstack\th1|{attempt}|24|SpillThread\tTIMED_WAITING|a.B.c|nan",  # line 13
        f"1201\tstack\th1|{attempt}|24|SpillThread\tTIMED_WAITING|a.B.c|-5",  # line 14
        f"1202\tstack\th1|{attempt}|24|SpillThread\tTIMED_WAITING|a.B.c|1e999",  # line 15
        f"-5\tstack\th1|{attempt}|24|SpillThread\tRUNNABLE|a.B.c",  # line 16
        "-0.5\tcpu\th1|all\tuser=3.5",  # line 17
        "1203\tcpu\th1|all\tuser=nan;idle=96.5",  # line 18
        "1204\tcpu\th1|all\tuser=3.5;idle=inf",  # line 19
        f"1205\tstack\th1|{attempt}|24|SpillThread\tTIMED_WAITING|a.B.c|2.5",  # line 20: lands
    )
    path = write_samples(tmp_path / "s.tsv", bad)
    store = Store(store_dir)
    (result,) = ingest_paths([path], store).results
    assert (result.status, result.unknown) == ("landed", {"malformed": 7})
    for line, what in ((13, "duration 'nan'"), (14, "duration '-5' is negative"), (15, "duration '1e999'"),
                       (16, "timestamp '-5'"), (17, "timestamp '-0.5'"), (18, "'user' value 'nan'"),
                       (19, "'idle' value 'inf'")):  # fmt: skip
        assert any(f"{path}:{line}:" in n and what in n for n in result.notes), (line, what)
    con = store.connect()
    assert con.execute("SELECT count(*), min(ts_ms), max(duration_ms) FROM samples").fetchone() == (12, 1000, 2.5)
    assert con.execute("SELECT count(*) FROM system_samples").fetchone() == (0,)


def test_rebuild_options_for_a_job_with_ingested_instances_are_refused(fixtures_dir: Path, store_dir: Path) -> None:
    # A HiTune CSV job has vertex instances and no samples: `dataflow --unmapped` (or --spec,
    # --period-ms) had printed the busy/idle table instead, with exit 0, the options ignored.
    from click.testing import CliRunner

    from phaseline.cli import main

    ingest_paths([fixtures_dir / "intel-hitune" / "visual_report_example"], Store(store_dir))
    (job,) = Store(store_dir).connect().execute("SELECT DISTINCT job_id FROM vertex_instances").fetchone() or ("",)
    base = ["dataflow", job, "--store", str(store_dir), "--format", "csv"]
    assert CliRunner().invoke(main, base).exit_code == 0
    for extra in (["--unmapped"], ["--period-ms", "7"], ["--spec", "hadoop-0.20"]):
        result = CliRunner().invoke(main, [*base, *extra])
        assert result.exit_code == 2, (extra, result.output)
        assert f"{extra[0]}: for a rebuild only" in result.output
    bad = CliRunner().invoke(main, [*base, "--spec", "nosuch"])
    assert bad.exit_code == 1
    assert "nosuch: no such specification file" in bad.output
